# Binnacle's manager image, for people who build with Docker. `binnacle install-self --image`
# runs it. The Node base is given by reference and digest, and required:
#   docker build --build-arg NODE_IMAGE=docker.io/library/node:20-bookworm-slim@sha256:<digest> \
#                --build-arg GO_IMAGE=docker.io/library/golang:1.26-bookworm@sha256:<digest> -t binnacle .
# The image holds what Binnacle's own OCI builder puts in
# it: the compiled output, the production dependencies, Helm's engine (WebAssembly) and the
# console's built page, under
# /opt/binnacle, run as a non-root user.
ARG NODE_IMAGE
ARG GO_IMAGE
FROM ${GO_IMAGE} AS go

FROM ${NODE_IMAGE} AS build
WORKDIR /src
# Go builds Helm's engine for WebAssembly (src/helm-engine/go); the image does not need Go.
COPY --from=go /usr/local/go /usr/local/go
ENV PATH=/usr/local/go/bin:$PATH
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY bin ./bin
COPY src ./src
COPY hack/build-tools.sh ./hack/build-tools.sh
COPY hack/tools/go.mod ./hack/tools/go.mod
RUN npm run build && bash hack/build-tools.sh helm-wasm && npm prune --omit=dev

FROM ${NODE_IMAGE}
WORKDIR /opt/binnacle
COPY --from=build /src/package.json ./package.json
COPY --from=build /src/bin ./bin
COPY --from=build /src/dist ./dist
COPY --from=build /src/node_modules ./node_modules
COPY --from=build /src/.cache/helm-wasm ./.cache/helm-wasm
# The console's built page (manager --console-listen), which npm run build writes there.
COPY --from=build /src/.cache/console ./.cache/console
# As build-self-image sets them (src/self/image.ts: MALLOC_ENV, NODE_FLAGS; image.test.ts checks this file).
ENV NODE_ENV=production BINNACLE_HELM_WASM_DIR=/opt/binnacle/.cache/helm-wasm MALLOC_ARENA_MAX=2 MALLOC_MMAP_THRESHOLD_=131072 MALLOC_TRIM_THRESHOLD_=131072
USER 65532:65532
ENTRYPOINT ["node", "--optimize-for-size", "--no-maglev", "/opt/binnacle/bin/binnacle.js"]
CMD ["manager"]
