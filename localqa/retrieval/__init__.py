"""Retrieval: who may see which document (eligibility, before anything is ranked), BM25, the
sentence encoder and its vectors, and the fusion of both into each part's candidates."""
