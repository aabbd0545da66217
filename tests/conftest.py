"""Fixtures and session set-up shared by the test modules."""
