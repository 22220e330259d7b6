-- Give the embedded engine's freed memory back to the system: its allocator (jemalloc) keeps the pages a
-- large insert or a pipeline run freed, and on its own returns them only as later allocations come.
SYSTEM JEMALLOC PURGE
