celos.defineWorkflow({"id": "hidden"});
