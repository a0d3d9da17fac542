//! `vouch mcp`: serve the final-report validator over MCP stdio.
