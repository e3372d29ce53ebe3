// Stub: the Letta Code CLI bundle never loads this package on the app-server path.
