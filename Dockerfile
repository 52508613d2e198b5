# syntax=docker/dockerfile:1
# The device-data service. Build: docker build -t device-data-service .   (docker compose builds it too)

# --- build: all dependencies, compile TypeScript, then drop the dev dependencies -------------------
FROM node:20-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY schemas ./schemas
COPY src ./src
COPY scripts ./scripts
COPY web ./web
# The web console is bundled into dist/web (npm ci's prepare step skipped it: web/ was not there yet).
RUN npm run build && npm run build:web && npm prune --omit=dev

# --- runtime ----------------------------------------------------------------------------------------
FROM node:20-slim
ENV NODE_ENV=production \
    PORT=8080 \
    DATA_DIR=/data
WORKDIR /app
# package.json marks the project root: schemas/ and the SQL migrations are found next to it.
COPY --from=build /app/package.json /app/package-lock.json ./
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY --from=build /app/schemas ./schemas
COPY --from=build /app/src/store/metadata/migrations ./src/store/metadata/migrations
# A named volume mounted on /data starts with this directory's owner, so the node user can write it.
RUN mkdir -p /data && chown node:node /data
USER node
VOLUME ["/data"]
EXPOSE 8080
HEALTHCHECK --interval=10s --timeout=5s --start-period=30s --retries=5 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:'+(process.env.PORT||8080)+'/health').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]
# node itself is PID 1 here and handles SIGTERM (graceful shutdown in src/main.ts).
CMD ["node", "dist/src/main.js"]
