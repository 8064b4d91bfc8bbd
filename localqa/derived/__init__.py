"""Derived figures: the glossary, the arithmetic grammar, operands read from cited cells, the
figure computed and checked, comparisons and extremes over rows."""
