"""The question: its parts, the documents it names (routing) or is scoped to, and the periods
it asks about."""
