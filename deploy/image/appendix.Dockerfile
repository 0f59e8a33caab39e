# Appended by repo2docker (--appendix) after it has built binder/ and run binder/postBuild:
# the hub extras, into the environment that runs the Jupyter server.
RUN ${NB_PYTHON_PREFIX}/bin/python -m pip install --no-cache-dir -r ${REPO_DIR}/deploy/hub-requirements.txt
# The exchange classes that talk to the ngshare service (Zero to JupyterHub's graded work),
# vendored in deploy/vendor/ngshare_exchange (upstream master c22c0d4); the requirements file
# names it relative to the repository's root, hence the cd; --no-deps: the file says why.
RUN cd ${REPO_DIR} && ${NB_PYTHON_PREFIX}/bin/python -m pip install --no-cache-dir --no-deps -r deploy/exchange-requirements.txt
# The sandbox the course grades students' code in (attnlab/grading/sandbox.py): bubblewrap.
USER root
RUN apt-get update -qq && apt-get install -y -qq --no-install-recommends bubblewrap \
    && rm -rf /var/lib/apt/lists/*
USER ${NB_USER}
