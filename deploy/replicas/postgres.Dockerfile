# The PostgreSQL of docker-compose.yml's profile `replicas` (users, tokens and the replicas'
# announcements and leader's lock): Debian's own package, on the base the service's image is
# built on. Its database `selfhub`, owned by the role `selfhub` with the password in
# SELFHUB_PG_PASSWORD, is made on the volume's first start (postgres-start.sh). Build from the
# repository's root:
#
#   docker build -f deploy/replicas/postgres.Dockerfile -t selfhub-postgres .

ARG BASE_IMAGE=python:3.12-slim
FROM ${BASE_IMAGE}
# Debian's package makes a cluster of its own when installed: not wanted, the volume holds one.
RUN mkdir -p /etc/postgresql-common \
 && echo "create_main_cluster = false" > /etc/postgresql-common/createcluster.conf \
 && apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends postgresql \
 && rm -rf /var/lib/apt/lists/* \
 && mkdir -p /var/lib/postgresql/data \
 && chown postgres:postgres /var/lib/postgresql/data
COPY deploy/replicas/postgres-start.sh /usr/local/bin/selfhub-postgres
USER postgres
VOLUME ["/var/lib/postgresql/data"]
EXPOSE 5432
ENTRYPOINT ["/usr/local/bin/selfhub-postgres"]
