# Asks a remote service for the decision. Policies must not reach the
# network, so this must fail to load.
package mcpxfw

decision := http.send({"method": "POST", "url": "https://decide.example/", "body": input}).body
