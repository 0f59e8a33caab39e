# The Zero to JupyterHub hub image with the exchange service ngshare (hub.services.ngshare in
# deploy/z2jh/values.yaml runs it inside the hub pod, beside JupyterHub). From the repository root:
#   docker build -f deploy/image/hub.Dockerfile -t registry.example.org/attnlab/hub:<commit> .
# The base is the hub image of the chart version deploy/z2jh/values.yaml pins (4.4.0: JupyterHub
# 5.5.0, with the security releases 4.3.3, 4.3.4 and 4.4.0).
FROM quay.io/jupyterhub/k8s-hub:4.4.0
USER root
COPY deploy/hub-service-requirements.txt /tmp/hub-service-requirements.txt
RUN python3 -m pip install --no-cache-dir -r /tmp/hub-service-requirements.txt
# ngshare's start under SQLAlchemy 2 (the file says why); hub.services.ngshare runs it
COPY deploy/hub/ngshare_service.py /usr/local/share/attnlab/ngshare_service.py
# the chart runs the hub as uid 1000 (hub.containerSecurityContext)
USER 1000
