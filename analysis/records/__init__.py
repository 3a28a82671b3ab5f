"""Construction-phase records and enforcement: inspections, rainfall, penalties, notices of violation."""

__all__ = ['csv_rows', 'inspections', 'nov', 'penalty', 'rainfall']
