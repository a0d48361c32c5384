internal import EventGraphCrypto
import EventGraphLocking
internal import EventGraphText
import Foundation
internal import LMDB

/// How a store is opened.
public struct StoreOptions: Sendable {
  /// What a commit waits for before it returns.
  public enum Durability: Sendable, Hashable {
    /// fsync on every commit (LMDB's default): a returned commit survives power loss.
    case durable
    /// No fsync: atomic and consistent, but the last commits before an OS crash or power
    /// loss may be lost (never a partial one). ``EventStore/flush()`` forces them out.
    case relaxed
  }
  public var readOnly: Bool
  public var durability: Durability
  /// The initial map size; it grows by itself.
  public var initialMapSize: Int
  /// Bytes of zeros kept written past the data in the store's file, with durable commits.
  ///
  /// A commit then seldom has to grow the file, whose flush would also journal the new
  /// size. 1 MiB by default, 0 for none; the file is up to one and a half times this
  /// bigger than its data (``StoreStatistics/usedSize``).
  public var fileReserve: Int
  /// Check every page of the store's file before opening it.
  ///
  /// A damaged file is then reported (``ErrorCode/damaged``) instead of faulting a
  /// read; the command-line tool always checks. Reading the whole file costs time in proportion to its size, so a
  /// service that opens its store once may prefer `eventtool verify` on a schedule. The
  /// file's length and meta pages are checked at every open.
  public var checkPages: Bool
  /// With ``checkPages``, check every projection entry against its checksum too (a
  /// rebuild, which makes them anew, skips this).
  public var checkEntries: Bool
  /// The file of the key-encryption key that opens the store's personal data.
  ///
  /// Docs/privacy.md: 32 bytes, mode 0600, made by ``EventStore/generateKeyFile(at:)``.
  /// Needed to write a store whose model has personal attributes, and to read their
  /// values; without it they read as ``SealedState/locked``.
  public var keyFile: String?
  /// The key-encryption key's 32 bytes, for a service that keeps it elsewhere than in a
  /// file (a secrets manager); ``keyFile`` wins when both are given.
  public var keyBytes: [UInt8]?
  /// When the store applies its recorded retention policy by itself, as commits land
  /// (``EventStore/setRetentionPolicy(_:)``, Docs/retention.md); `nil`, the default, never.
  public var retention: RetentionSchedule?

  public init(
    readOnly: Bool = false, durability: Durability = .durable, initialMapSize: Int = 256 << 20,
    fileReserve: Int = 1 << 20, checkPages: Bool = false, checkEntries: Bool = true, keyFile: String? = nil,
    keyBytes: [UInt8]? = nil, retention: RetentionSchedule? = nil
  ) {
    self.retention = retention
    self.keyFile = keyFile
    self.keyBytes = keyBytes
    self.checkPages = checkPages
    self.checkEntries = checkEntries
    self.readOnly = readOnly
    self.durability = durability
    self.initialMapSize = initialMapSize
    self.fileReserve = fileReserve
  }
}

/// What a commit was given in the log.
public struct CommitInfo: Sendable, Hashable {
  public let number: UInt64
  public let firstSequence: UInt64
  public let lastSequence: UInt64
  public let time: Date
}

/// What a commit did — ``EventStore/write(metadata:_:)`` or
/// ``EventStore/commit(expecting:idempotencyKey:metadata:_:)``, which answer a repeated
/// idempotency key alike: with the first commit that carried it, the closure not run.
public struct CommitResult<Value> {
  /// The commit in the log.
  ///
  /// The new one, or for a repeated idempotency key the first commit that carried the key.
  /// `nil` when the closure changed nothing (nothing was appended).
  public let commit: CommitInfo?
  /// What the closure returned; `nil` only when it did not run (a repeated idempotency key).
  public let value: Value?
  /// Whether the idempotency key was already in the store: nothing was appended and
  /// ``commit`` describes the first commit.
  public let isDuplicate: Bool

  @usableFromInline
  init(commit: CommitInfo?, value: Value?, isDuplicate: Bool) {
    self.commit = commit
    self.value = value
    self.isDuplicate = isDuplicate
  }
}

extension CommitResult: Sendable where Value: Sendable {}

/// An event-sourced object-graph store: a directory holding one LMDB environment with the
/// log and its projections (Docs/store-layout.md).
///
/// ```swift
/// let store = try EventStore.create(at: "/tmp/book", model: model)
/// let momo = try store.write { tx in
///   let p = try tx.insert("AddressBook")
///   try tx.set(p, "firstName", .string("桃"))
///   return p
/// }.value!
/// let name = try store.read { try $0.value(momo, "firstName") }
/// ```
public final class EventStore: Sendable {
  /// The store format this version writes and reads.
  ///
  /// Format 2 adds a checksum to every projection entry; format 3 keeps ordered lists by
  /// order key, with the `members` projection; format 4 places order keys at most 64 to a
  /// bucket and keeps counts for lists of more than 128 members, so that positions are
  /// found without walking the list (Docs/store-layout.md). An older store is
  /// upgraded when it is first opened for writing: every version's projections are made
  /// anew from its log (the logs are the same in every format).
  public static let formatVersion = 4

  let env: Environment
  let dbs: StoreDatabases
  /// The active model: the one commits are checked against and written in.
  public let model: Model
  public let path: String
  public let options: StoreOptions
  /// The store's unique identity, made when it was created.
  public let storeID: String
  private let registryKey: String
  /// The writer thread, the log's notifier, consumers and projections (Service/).
  let service: StoreService
  /// The one path of commits to the log.
  let commits: CommitWriter
  /// What this handle's last ``write(metadata:_:)`` left, for the next one to trust
  /// instead of reading it back when no other write came between (see ``LastCommit``).
  private let lastCommit = Locked<LastCommit?>(nil)
  /// Other versions' databases and models, opened on first use (``databases(version:)``).
  let otherVersions = Locked<[Int: VersionDatabases]>([:])
  /// What the service's commits wait for before they return, besides the local commit
  /// (``setAcknowledger(_:)``).
  let acknowledger = Locked<(any CommitAcknowledging)?>(nil)
  /// The checks parts of a service outside the store add to its health (``setHealthCheck(_:_:)``).
  let healthChecks = Locked<[String: @Sendable () -> StoreHealth.Check]>([:])
  /// The handle this one was opened from at another version (``atActiveVersion()``): it
  /// owns the environment and its claim, and is kept alive while this one is.
  private let predecessor: EventStore?

  deinit {
    service.shutdown()
    if predecessor == nil { OpenStores.release(registryKey) }
  }

  // MARK: - Creating and opening

  /// Creates a new store in `path` (a directory that does not exist or is empty).
  ///
  /// - Throws: ``ErrorCode/alreadyExists`` when `path` holds anything.
  public static func create(at path: String, model: Model, options: StoreOptions = .init()) throws -> EventStore {
    try create(at: path, model: model, options: options, storeID: nil)
  }

  /// Checks that a store can be created in `path`: it does not exist, or is an empty
  /// directory (`true` then).
  ///
  /// - Throws: ``ErrorCode/alreadyExists`` when `path` holds anything.
  @discardableResult
  public static func checkCreatable(at path: String) throws -> Bool {
    var isDirectory: ObjCBool = false
    guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else { return false }
    guard isDirectory.boolValue, (try FileManager.default.contentsOfDirectory(atPath: path)).isEmpty else {
      throw StoreError.alreadyExists(path: path)
    }
    return true
  }

  /// ``create(at:model:options:)`` with a given identity: a read replica or a salvaged copy
  /// keeps the identity of the store it copies; `nil` makes a new one.
  public static func create(at path: String, model: Model, options: StoreOptions = .init(), storeID: String?)
    throws -> EventStore
  {
    try create(at: path, model: model, options: options, storeID: storeID, blindKey: nil)
  }

  /// ``create(at:model:options:storeID:)`` whose keyring, when its model has personal
  /// attributes, takes `blindKey` as its blind-hash key: a snapshot's, which copies its
  /// source's sealed values with their blind hashes.
  static func create(
    at path: String, model: Model, options: StoreOptions, storeID: String?, blindKey: SymmetricKey?
  ) throws -> EventStore {
    return try StoreError.reportingStorage(path: path) {
      var kek: SymmetricKey?
      if model.hasPersonalAttributes {
        guard let source = options.keySource else {
          throw StoreError.keyRequired(
            path: path, detail: "its model has personal attributes: give a key-encryption key to create it")
        }
        do { kek = try source.load() } catch {
          throw StoreError.wrongKey(path: path, keyFile: source.source, detail: "\(error)")
        }
      }
      let id = storeID ?? UUID().uuidString
      _ = try checkCreatable(at: path)
      try StoreFiles.makePrivateDirectory(path, intermediate: true)
      // Scoped, so this first handle is closed before the store opens its own.
      do {
        let env = try Environment(path: path, options: environmentOptions(options))
        guard let dbs = try StoreDatabases.open(env, version: model.version, create: true) else {
          throw StoreError.notAStore(path: path, detail: "cannot create its databases")
        }
        try env.write { txn in
          try txn.put(dbs.meta, key: MetaKey.format, value: String(formatVersion))
          try txn.put(dbs.meta, key: MetaKey.storeID, value: id)
          try txn.setActiveVersion(model.version, in: dbs.meta)
          try dbs.putModel(model, txn)
          if let kek, let blindKey {
            _ = try Keyring.setUp(txn, meta: dbs.meta, kek: kek, identity: Keyring.identity(id), blind: blindKey)
          }
        }
      }
      return try EventStore(path: path, options: options)

    }
  }

  /// Opens an existing store; the model is read from the store itself.
  ///
  /// - Throws: ``ErrorCode/notAStore``, ``ErrorCode/newerFormat``, ``ErrorCode/damaged``,
  ///   ``ErrorCode/storage`` when LMDB fails.
  public convenience init(path: String, options: StoreOptions = .init()) throws {
    do {
      try self.init(opening: path, options: options)
    } catch let e as LMDBError {
      throw StoreError.reporting(e, path: path)
    }
  }

  private init(opening path: String, options: StoreOptions) throws {
    guard FileManager.default.fileExists(atPath: path + "/data.mdb") else {
      throw StoreError.notAStore(path: path, detail: "no data.mdb in it")
    }
    // LMDB must not open one environment twice in a process: closing the second would
    // drop the first one's locks.
    let key = URL(fileURLWithPath: path).resolvingSymlinksInPath().standardizedFileURL.path
    guard OpenStores.claim(key) else { throw StoreError.alreadyOpen(path: path) }
    var claimed = true
    defer { if claimed { OpenStores.release(key) } }
    let env: Environment
    do {
      env = try Environment(path: path, options: Self.environmentOptions(options))
    } catch let e where e.damage != nil {
      throw StoreError.reporting(e, path: path)
    } catch {
      throw StoreError.notAStore(path: path, detail: error.description)
    }
    guard let meta = try env.openDatabase("meta", create: false),
      let format = try env.read({ try $0.metaNumber(meta, MetaKey.format) }),
      let active = try env.read({ try $0.activeVersion(in: meta) }),
      let id = try env.read({ try $0.get(meta, key: MetaKey.storeID) }).map({ String(decoding: $0, as: UTF8.self) })
    else {
      throw StoreError.notAStore(path: path, detail: "no EventGraph metadata")
    }
    guard format <= Self.formatVersion else {
      throw StoreError.newerFormat(path: path, found: format, supported: Self.formatVersion)
    }
    if format < Self.formatVersion {
      guard !options.readOnly else { throw StoreError.olderFormat(path: path, found: format) }
      try Self.upgrade(env, meta: meta, path: path)
    }
    guard var dbs = try StoreDatabases.open(env, version: active, create: !options.readOnly) else {
      throw StoreError.notAStore(path: path, detail: "databases are missing")
    }
    guard let doc = try env.read({ try $0.get(dbs.models, key: BigEndianKey(UInt64(active))) }) else {
      throw StoreError.notAStore(path: path, detail: "model version \(active) is missing")
    }
    let model = try Model(json: doc, file: "\(path) (stored model v\(active))")
    try env.read { try dbs.checkModelHash(model, $0, path: path) }
    dbs.keyring = try Keyring.open(
      env: env, meta: meta, path: path, storeID: id, model: model, key: options.keySource,
      writable: !options.readOnly)
    self.model = model
    self.registryKey = key
    claimed = false
    self.env = env
    self.dbs = dbs
    self.path = path
    self.options = options
    self.storeID = id
    self.predecessor = nil
    let followers = CommitFollowers(
      env: env, dbs: dbs, model: model, path: path, retention: options.readOnly ? nil : options.retention)
    let commits = CommitWriter(
      env: env, dbs: dbs, model: model, path: path, observer: followers, metrics: CommitMetrics())
    self.commits = commits
    self.service = StoreService(commits: commits, followers: followers, readOnly: options.readOnly)
  }

  /// A handle at `version` sharing `predecessor`'s environment (``atActiveVersion()``).
  private init(following predecessor: EventStore, version: Int) throws {
    var (dbs, model) = try predecessor.databases(version: version)
    dbs.keyring = predecessor.dbs.keyring
    try predecessor.env.read { try dbs.checkModelHash(model, $0, path: predecessor.path) }
    self.predecessor = predecessor
    self.env = predecessor.env
    self.dbs = dbs
    self.model = model
    self.path = predecessor.path
    self.options = predecessor.options
    self.storeID = predecessor.storeID
    self.registryKey = predecessor.registryKey
    let followers = CommitFollowers(
      env: env, dbs: dbs, model: model, path: path, retention: options.readOnly ? nil : options.retention)
    let commits = CommitWriter(
      env: env, dbs: dbs, model: model, path: path, observer: followers, metrics: predecessor.commits.metrics)
    self.commits = commits
    self.service = StoreService(commits: commits, followers: followers, readOnly: options.readOnly)
    acknowledger.withLock { $0 = predecessor.acknowledger.withLock { $0 } }
  }

  /// This handle when its version is still the store's active one; otherwise a handle at
  /// the active version, sharing this one's environment (one process must not open an
  /// LMDB environment twice).
  ///
  /// After a switch (an upcast, a following upcast's switch, a rollback) this handle's
  /// commits are refused with ``ErrorCode/versionChanged``; a service moves its
  /// callers to the handle this returns. This handle stays open for reads of its version
  /// while the new one lives.
  ///
  /// ```swift
  /// do {
  ///   try await store.commit { tx in … }
  /// } catch let e as StoreError where e.code == .versionChanged {
  ///   store = try store.atActiveVersion()   // and build the commit against store.model
  /// }
  /// ```
  public func atActiveVersion() throws -> EventStore {
    let active = try activeVersion()
    return active == model.version ? self : try EventStore(following: self, version: active)
  }

  /// Makes every version's projections anew from its log, with checksums, then marks the
  /// store as of the current format; an upgrade killed midway runs again at the next open.
  private static func upgrade(_ env: Environment, meta: Database, path: String) throws {
    let documents = try env.read { txn in
      var found: [(Int, [UInt8])] = []
      guard let models = try txn.openDatabase("models") else { return found }
      try txn.forEach(models) { k, v in
        if let version = KeyField.u64(k, at: 0) { found.append((Int(version), [UInt8](v))) }
        return true
      }
      return found
    }
    for (version, document) in documents {
      guard let dbs = try StoreDatabases.open(env, version: version, create: true) else { continue }
      let model = try Model(json: document, file: "\(path) (stored model v\(version))")
      _ = try Replay.rebuild(CommitWriter(env: env, dbs: dbs, model: model, path: path))
    }
    try env.write { txn in _ = try txn.put(meta, key: MetaKey.format, value: String(formatVersion)) }
  }

  static func environmentOptions(_ o: StoreOptions) -> EnvironmentOptions {
    var flags: EnvironmentFlags = []
    if o.readOnly { flags.insert(.readOnly) }
    if o.durability == .relaxed { flags.insert(.noSync) }
    // Without fsync nothing waits for a flush: no reserve.
    return EnvironmentOptions(
      flags: flags, mapSize: o.initialMapSize, maxDatabases: 64, maxReaders: 126,
      fileReserve: o.durability == .durable ? max(0, o.fileReserve) : 0, checkPages: o.checkPages,
      checksummedDatabases: o.checkEntries ? StoreDatabases.isChecksummed : nil)
  }

  // MARK: - Reading

  /// Runs `body` on a consistent snapshot of the graph.
  ///
  /// Keep it short: an open snapshot
  /// stops LMDB from reusing pages freed after it began.
  public func read<R>(_ body: (Snapshot) throws -> R) throws -> R {
    try read(dbs: dbs, model: model, body)
  }

  /// Runs `body` on a consistent snapshot of another version's graph, read-only: the
  /// version a following upcast builds (while it is caught up, it holds every source
  /// commit), or an older one kept for a rollback.
  ///
  /// - Throws: ``ErrorCode/unknownModelVersion``, what `body` throws.
  public func read<R>(version: Int, _ body: (Snapshot) throws -> R) throws -> R {
    let (dbs, model) = try databases(version: version)
    return try read(dbs: dbs, model: model, body)
  }

  private func read<R>(dbs: StoreDatabases, model: Model, _ body: (Snapshot) throws -> R) throws -> R {
    let txn = ReadHandle(try env.beginRead())
    let snapshot = Snapshot(reader: GraphReader(txn: txn, dbs: dbs, model: model))
    defer {
      snapshot.isOpen = false
      txn.end()
    }
    do {
      return try body(snapshot)
    } catch let e as LMDBError {
      throw StoreError.reporting(e, path: path)
    }
  }

  // MARK: - Writing

  /// Runs `body` in a write transaction and commits what it did as one commit: the events
  /// are appended to the log and every projection updated in the same LMDB transaction.
  ///
  /// If `body` throws, or the commit breaks a rule of the model, nothing is written.
  /// When the store must grow its map, `body` runs again in a fresh transaction, so it
  /// should act only through `tx`.
  ///
  /// An idempotency key in `metadata` that an earlier commit carried makes the write a
  /// retry: `body` does not run, nothing is appended, and the result names the first
  /// commit (``CommitResult/isDuplicate``), as the asynchronous
  /// ``commit(expecting:idempotencyKey:metadata:_:)`` does. A key `body` sets on
  /// `tx.metadata` itself is looked up when it returns, and a repeat is refused with
  /// ``ServiceError`` `alreadyCommitted`.
  ///
  /// - Returns: the commit and what `body` returned (`nil` only for a retry).
  /// - Throws: what `body` throws, ``StoreError`` (validation names the object and
  ///   property), ``ServiceError`` `invalidIdempotencyKey`, or `LMDBError`.
  @inlinable @discardableResult
  public func write<R>(metadata: CommitMetadata = .init(), _ body: (Transaction) throws -> R) throws -> CommitResult<R>
  {
    try write(metadata: metadata, time: nil, body)
  }

  /// ``write(metadata:_:)`` with the commit stamped `time` instead of now (tests that need
  /// the same bytes from every run).
  ///
  /// Inlinable, as the public one: the work is done by ``writeCommit(metadata:time:_:)``,
  /// which is not generic, and the caller's value is kept here, where `R` is known. A
  /// generic body would look up the metadata of `CommitResult<R>` and `R?` at run time on
  /// every commit.
  @inlinable @discardableResult
  func write<R>(metadata: CommitMetadata = .init(), time: Date?, _ body: (Transaction) throws -> R) throws
    -> CommitResult<R>
  {
    var value: R?
    let (commit, isDuplicate) = try writeCommit(metadata: metadata, time: time) { value = try body($0) }
    return CommitResult(commit: commit, value: value, isDuplicate: isDuplicate)
  }

  /// One commit of `body`'s changes, or the first commit of a repeated idempotency key
  /// (`body` not run; `isDuplicate`).
  @usableFromInline
  func writeCommit(metadata: CommitMetadata, time: Date?, _ body: (Transaction) throws -> Void) throws
    -> (commit: CommitInfo?, isDuplicate: Bool)
  {
    if options.readOnly { throw StoreError.readOnly(path: path) }
    let (commit, isDuplicate, id) = try commits.run { batch, _ in
      let id = batch.handle.transactionID
      // Taken, not read: a transaction that does not commit leaves nothing to trust.
      let last = lastCommit.withLock { $0.take() }.flatMap { $0.transaction &+ 1 == id ? $0 : nil }
      // The last commit passed these checks, and nothing was written since.
      if let last { batch.logEnd = last.logEnd } else { try batch.checkWritable() }
      if let key = metadata.idempotencyKey, let first = try batch.firstCommit(withKey: key) {
        return (first as CommitInfo?, true, id)
      }
      let tx = batch.transaction(metadata: metadata)
      defer { tx.close() }
      do {
        try body(tx)
        return (try batch.commit(tx, time: time), false, id)
      } catch {
        throw tx.namingInserted(error)
      }
    }
    if let info = commit, !isDuplicate {
      lastCommit.withLock {
        $0 = LastCommit(transaction: id, logEnd: LogEnd(commit: info.number, sequence: info.lastSequence))
      }
    }
    return (commit, isDuplicate)
  }

  /// How many batches (write transactions) the service's writer thread has committed, for
  /// the benchmarks' commits-per-batch figures.
  package var batchesCommitted: Int { service.batchesCommitted }

  /// Forces commits made with ``StoreOptions/Durability/relaxed`` to disk.
  public func flush() throws { try env.sync(force: true) }
}

/// A commit of ``EventStore/write(metadata:_:)`` and the log's end it left.
///
/// LMDB gives each write transaction the ID of the last one committed plus one, counted
/// across every process that writes the environment; an aborted transaction uses none. So
/// a write transaction whose ID follows `transaction` sees the store exactly as that commit
/// left it: the log ends at `logEnd`, and the checks made before that commit still hold.
/// Any other write in between (another process, the writer thread, a rebuild, an upcast)
/// moves the ID on, and the log's end is read from the log again.
private struct LastCommit: Sendable {
  let transaction: UInt64
  let logEnd: LogEnd
}

/// The stores open in this process, by resolved path.
enum OpenStores {
  private static let paths = Locked<Set<String>>([])

  static func claim(_ path: String) -> Bool { paths.withLock { $0.insert(path).inserted } }
  static func release(_ path: String) { _ = paths.withLock { $0.remove(path) } }
}
