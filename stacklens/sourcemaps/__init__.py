"""Source maps: uploaded bundles, matching frames to maps, and applying them when a page is shown."""
