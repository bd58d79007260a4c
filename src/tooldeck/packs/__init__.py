"""Tool packs: each imports core only."""
