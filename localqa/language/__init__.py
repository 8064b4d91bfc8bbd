"""The word rules every stage shares: words, names, identifiers, the lexicon of minor words."""
