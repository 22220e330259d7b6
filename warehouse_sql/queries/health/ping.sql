-- The warehouse answers: the health check's probe (`GET /health`), the cheapest statement the engine runs.
SELECT 1
