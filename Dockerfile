# The tooldeck image of compose.yaml: this checkout with every extra (docs/deploy.md).
FROM python:3.11-slim
WORKDIR /app
COPY . /app
RUN pip install --no-cache-dir '/app[all]'
EXPOSE 8765
CMD ["tooldeck", "serve", "--host", "0.0.0.0"]
