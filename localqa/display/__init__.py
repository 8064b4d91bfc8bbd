"""What a reader is shown: the terminal's text, a quote found and highlighted on its page."""
