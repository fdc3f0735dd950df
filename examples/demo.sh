#!/bin/sh
# What cordon's demo runs inside the sandbox (see the README):
#   bin/cordon -s examples/demo.json -- sh examples/demo.sh
echo "1. read examples/secret.txt (denyRead):"
if [ -s examples/secret.txt ]; then echo "   LEAKED: $(cat examples/secret.txt)"; else echo "   hidden: it reads as an empty file"; fi
echo "2. connect to evil.example.com (deniedDomains):"
curl -sS -o /dev/null https://evil.example.com/ 2>&1 | sed 's/^/   /'
echo "3. connect directly, around the proxy:"
curl -sS --max-time 3 --noproxy '*' -o /dev/null http://example.com/ 2>&1 | sed 's/^/   /'
echo "4. write outside the project (not in allowWrite):"
(echo x > "$HOME/cordon-demo-escape") 2>&1 | sed 's/^/   /'
echo "5. create a .bashrc in the project (mandatory deny: it would run outside the sandbox later):"
(echo x > .bashrc) 2>&1 | sed 's/^/   /'
echo "6. create a key three directories down (denyWrite **/*.pem: a file that does not exist yet):"
(mkdir -p cordon-demo/a/b && echo x > cordon-demo/a/b/server.pem) 2>&1 | sed 's/^/   /'; rm -rf cordon-demo
echo "7. write inside the project (allowWrite):"
echo "written from the sandbox" > cordon-demo-output.txt && echo "   ok: $(cat cordon-demo-output.txt)" && rm cordon-demo-output.txt
