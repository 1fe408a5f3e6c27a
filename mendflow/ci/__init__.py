"""The Build/CI Runner stage (seed 003): the job that builds one commit and the BuildReport it returns."""
