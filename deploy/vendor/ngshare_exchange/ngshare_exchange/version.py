__version__ = '0.5.3+c22c0d4'
