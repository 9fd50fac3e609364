# The load balancer of docker-compose.yml's profile `replicas`: HAProxy from Debian's own
# package, on the base the service's image is built on, with deploy/replicas/haproxy.cfg.
# Build from the repository's root:
#
#   docker build -f deploy/replicas/lb.Dockerfile -t selfhub-lb .

ARG BASE_IMAGE=python:3.12-slim
FROM ${BASE_IMAGE}
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends haproxy \
 && rm -rf /var/lib/apt/lists/*
COPY deploy/replicas/haproxy.cfg /etc/haproxy/haproxy.cfg
USER haproxy
EXPOSE 8765
ENTRYPOINT ["haproxy", "-W", "-db", "-f", "/etc/haproxy/haproxy.cfg"]
