#!/usr/bin/env bash
# Build (and push) the single-user image for Zero to JupyterHub with repo2docker, from a clean
# checkout of this repository: the learner environment comes from binder/ exactly as on
# mybinder.org, plus the hub extras of deploy/hub-requirements.txt.
#   deploy/image/build.sh registry.example.org/attnlab/singleuser [--push]
# Needs docker and `pip install jupyter-repo2docker`. The tag is the commit, so a term can pin it.
set -euo pipefail
cd "$(dirname "$0")/../.."
image="${1:?usage: deploy/image/build.sh IMAGE_NAME [--push]}"
tag="$(git rev-parse --short=12 HEAD)"
if [[ -n "$(git status --porcelain)" ]]; then
    echo "the working tree has changes: commit them first (the image is tagged by commit)" >&2
    exit 1
fi
args=(--no-run --user-id 1000 --user-name jovyan --image-name "$image:$tag"
      --appendix "$(cat deploy/image/appendix.Dockerfile)")
if [[ "${2:-}" == "--push" ]]; then args+=(--push); fi
jupyter-repo2docker "${args[@]}" .
echo "built $image:$tag; put the tag into singleuser.image.tag of deploy/z2jh/values.yaml"
