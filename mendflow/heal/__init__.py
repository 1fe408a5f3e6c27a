"""Heal stage (seed 004): smart checklist, error analyzer, tri-modal healer, no-weakening gate, knowledge base."""
