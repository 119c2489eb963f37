"""Attacks on what was hardened: each test here reproduces one finding and fails on the code it was written against."""
