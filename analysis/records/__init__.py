"""Construction-phase records and enforcement: inspections, rainfall, penalties, notices of violation."""

__all__ = ["inspections", "nov", "penalty", "rainfall"]
