from mcp_services.cli import main

raise SystemExit(main())
