# The service against a real Redis: docker run -e REDIS_URL=redis://host:6379/0 -p 8000:8000 free-parking
FROM python:3.11-slim

WORKDIR /app
COPY pyproject.toml README.md ./
COPY service ./service
COPY replays ./replays
RUN pip install --no-cache-dir .

ENV FREE_PARKING_HOST=0.0.0.0 \
    FREE_PARKING_PORT=8000
EXPOSE 8000
USER nobody
CMD ["python", "-m", "service", "serve"]
