"""Fluency metrics; importing this package registers them."""
