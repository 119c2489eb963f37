"""Offline tools on exported logs: verify, step through, diff. They need neither Redis nor Sanic."""
