"""The event vocabulary, the envelope and its hash chain, the codec, and the stores."""
