"""Figures computed over a whole database: the dashboard's."""
