"""Rows of the primitive table, one module per lax family."""
