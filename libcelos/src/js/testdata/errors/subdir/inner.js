// In a subdirectory: never loaded.
celos.defineWorkflow({"id": "inner"});
