"""``python -m service`` commands that need no HTTP.

``play`` plays one game and prints its audit; ``simulate`` plays many and exports each.
"""
