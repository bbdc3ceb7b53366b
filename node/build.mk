# The Node.js package (node/): `make node-pack` stages node/ with the core/
# and sqlite/ sources it builds from at install, writes package.json's
# version (AMQ_VERSION of core/amq.h, amq's one version), and packs it with
# npm into build/node/amq-<version>.tgz, which installs offline
# (npm install ./amq-<version>.tgz compiles it with cc). tests/node/run.sh
# installs that tarball into a scratch project. Included by the top
# Makefile, whose variables it uses.

NODE_PKG_SRC := $(wildcard node/src/*.c node/src/*.h) node/package.json node/build.js \
	node/index.cjs node/index.mjs node/index.d.ts node/README.md
NODE_TGZ := $(BUILD)/node/amq-$(AMQ_VERSION).tgz

# Writes the version argv[2] into the package.json at argv[1].
define NODE_SET_VERSION
const f = process.argv[1], p = require(f);
p.version = process.argv[2];
require("fs").writeFileSync(f, JSON.stringify(p, null, 2) + "\n");
endef
export NODE_SET_VERSION

.PHONY: node-pack bench-node

node-pack: $(NODE_TGZ)

$(NODE_TGZ): $(NODE_PKG_SRC) $(CORE_SRC) $(CORE_HDR) $(SQLITE_SRC) $(SQLITE_HDR) core/amq.h
	@rm -rf $(BUILD)/node/stage && mkdir -p $(BUILD)/node/stage
	cp -r $(NODE_PKG_SRC:node/src/%=) node/src $(BUILD)/node/stage/
	cp -r core sqlite $(BUILD)/node/stage/
	node -e "$$NODE_SET_VERSION" "$$(pwd)/$(BUILD)/node/stage/package.json" '$(AMQ_VERSION)'
	cd $(BUILD)/node/stage && npm pack --silent --pack-destination .. >/dev/null
	@test -f $@

bench-node: $(NODE_TGZ)
	@bash bench/node/run.sh $(NODE_TGZ)
