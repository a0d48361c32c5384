// swift-tools-version: 6.0
import PackageDescription

let package = Package(
  name: "EventGraph",
  platforms: [.macOS(.v15)],
  products: [
    .library(name: "LMDB", targets: ["LMDB"]),
    .library(name: "EventGraph", targets: ["EventGraph"]),
    .library(name: "EventGraphMigration", targets: ["EventGraphMigration"]),
    .library(name: "EventGraphReplication", targets: ["EventGraphReplication"]),
    .library(name: "EventTool", targets: ["EventTool"]),
    .executable(name: "eventtool", targets: ["eventtool"]),
    // A disk that fails, for the tests' child processes (LD_PRELOAD); not linked anywhere.
    .library(name: "EventGraphFaultShim", type: .dynamic, targets: ["CFaultShim"]),
  ],
  targets: [
    // C at the edge: Debian's libraries, through module maps only. LMDB's:
    .systemLibrary(name: "CLMDB", path: "Sources/CLMDB"),
    // SQLite: the benchmarks' peer, and the reader of Core Data's SQLite stores.
    .systemLibrary(name: "CSQLite", path: "Sources/CSQLite"),
    // Intel's storage acceleration library (Debian's libisal-dev): the commit records'
    // CRC-32C with the processor's CRC instructions.
    .systemLibrary(name: "CISAL", path: "Sources/CISAL"),
    // nats.c (Debian's libnats-dev), the client of the replication stream; wrapped by
    // NATSClient as CLMDB is by LMDB.
    .systemLibrary(name: "CNATS", path: "Sources/CNATS"),
    .target(name: "NATSClient", dependencies: ["CNATS"]),
    // libsodium (Debian's libsodium-dev), the only cryptography: wrapped by EventGraphCrypto as
    // CLMDB is by LMDB.
    .systemLibrary(name: "CSodium", path: "Sources/CSodium"),
    // Crypto-shredding of personal data: the key file, sealing, wrapped subject keys in a slot
    // file written in place, blind indexes.
    .target(name: "EventGraphCrypto", dependencies: ["CSodium"]),
    // The log replicated to a NATS JetStream stream: shipping, read replicas, failover.
    .target(
      name: "EventGraphReplication", dependencies: ["EventGraph", "NATSClient", "EventGraphLocking", "EventGraphCrypto"]),
    // The package's one lock type (Mutex, or a pthread mutex the sanitizers can see when
    // Tools/sanitize builds); not a product.
    .target(name: "EventGraphLocking"),
    .target(name: "LMDB", dependencies: ["CLMDB", "CISAL", "EventGraphLocking"]),
    // The text formats' building blocks (JSON, DOT, ISO 8601 dates, spelling suggestions) and
    // SHA-256, shared by the library, the migrations and the tool; not a product, so not
    // public API.
    .target(name: "EventGraphText"),
    // The model, its values and events: loaded, checked and described without storage.
    .target(name: "EventGraphModel", dependencies: ["EventGraphText"]),
    // The query language (lexer, parser, checker, evaluator) over the model, without storage.
    .target(name: "EventGraphQuery", dependencies: ["EventGraphModel", "EventGraphText"]),
    .target(
      name: "EventGraph",
      dependencies: [
        "EventGraphModel", "EventGraphQuery", "LMDB", "EventGraphText", "EventGraphLocking", "EventGraphCrypto",
      ]),
    .target(name: "EventGraphMigration", dependencies: ["EventGraph", "EventGraphText"]),
    // Core Data's files read as they are: models (XML, legacy and compiled), stores (SQLite
    // through CSQLite, XML) and mapping models, turned into EventGraph's formats.
    .target(name: "EventGraphCoreData", dependencies: ["EventGraph", "EventGraphText", "CSQLite"]),
    .target(
      name: "EventTool",
      dependencies: [
        "EventGraph", "EventGraphMigration", "EventGraphReplication", "NATSClient", "EventGraphText",
        "EventGraphCoreData",
      ]),
    .executableTarget(name: "eventtool", dependencies: ["EventTool"]),
    // A child process for the crash and multi-process tests.
    .executableTarget(
      name: "StressWriter", dependencies: ["EventGraph", "EventGraphReplication", "NATSClient", "EventGraphLocking"]),
    // The n-th write or sync of a file made to fail (EIO, ENOSPC, a short write), loaded
    // with LD_PRELOAD into the disk-fault tests' eventtool children.
    .target(name: "CFaultShim"),
    // Baselines in C (raw LMDB, SQLite) for the side-by-side benchmarks.
    .target(name: "CBaselines", dependencies: ["CLMDB", "CSQLite"]),
    .executableTarget(
      name: "Benchmarks",
      dependencies: [
        "EventGraph", "EventGraphMigration", "EventGraphReplication", "NATSClient", "EventGraphCoreData", "LMDB",
        "CBaselines", "EventGraphLocking",
      ]),
    // The seeded generator shared by every randomized test.
    .target(name: "TestSupport", path: "Tests/TestSupport"),
    .testTarget(name: "LMDBTests", dependencies: ["LMDB", "TestSupport"]),
    .testTarget(name: "EventGraphCryptoTests", dependencies: ["EventGraphCrypto", "TestSupport"]),
    .testTarget(
      name: "EventGraphTests",
      dependencies: [
        "EventGraph", "EventGraphModel", "EventGraphQuery", "EventGraphText", "LMDB", "TestSupport", "EventGraphLocking",
      ]),
    // Record types written by `eventtool codegen` for the example models, compiled and used.
    .testTarget(
      name: "GeneratedRecordsTests", dependencies: ["EventGraph", "TestSupport"], exclude: ["Defaults.model.json"]),
    .testTarget(
      name: "EventGraphMigrationTests",
      dependencies: ["EventGraphMigration", "EventGraph", "EventGraphText", "LMDB", "TestSupport", "EventGraphLocking"]),
    .testTarget(
      name: "EventGraphCoreDataTests",
      dependencies: ["EventGraphCoreData", "EventGraph", "EventGraphMigration", "EventGraphText", "TestSupport"],
      exclude: ["Fixtures"]),
    .testTarget(
      name: "EventToolTests",
      dependencies: [
        "EventTool", "EventGraph", "EventGraphText", "EventGraphReplication", "NATSClient", "eventtool", "StressWriter",
        "TestSupport",
      ]),
  ],
  swiftLanguageModes: [.v6]
)
