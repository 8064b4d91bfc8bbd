"""The value a verified quote gives, one module per job (`choosing.value_of` puts them together)."""
