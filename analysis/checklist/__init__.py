"""The SWPPP contents checklist and the records it reads (certifications, guarantees, ESC practices)."""

__all__ = ["certification", "contents", "esc_practices", "guarantees"]
