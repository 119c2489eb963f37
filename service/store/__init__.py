"""The stores: Redis Streams (standalone and Cluster), the embedded store and its journal, durability, the archive,
log trimming, leases, pools and the Lua scripts. Everything here talks to Redis or to disk; the vocabulary it stores
lives in ``service/events`` (pure)."""
