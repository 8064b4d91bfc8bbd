"""`localqa serve`: the local web app and JSON API (extra `localqa[serve]`)."""
