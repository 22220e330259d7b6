# The StackLens image of compose.yaml: the server extra (API, dashboards, pipelines, Dagster with its
# PostgreSQL storage), started as `stacklens serve`, `stacklens migrate`, `dagster-daemon` or `dagster-webserver`.
FROM python:3.11-slim
WORKDIR /app
COPY . /app
RUN pip install --no-cache-dir '.[server]' && useradd --system --home /var/lib/stacklens stacklens \
    && mkdir -p /var/lib/stacklens && chown stacklens /var/lib/stacklens
USER stacklens
EXPOSE 8000
CMD ["stacklens", "serve", "--host", "0.0.0.0", "--port", "8000"]
