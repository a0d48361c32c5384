import Foundation
internal import LMDB

// Where a consumer group lives: the `groups.vN` database of the version its positions are
// sequences of (Docs/store-layout.md). Names have no `:`, so it separates the key's parts:
//
//   c:GROUP                 the partition count (u64)
//   p:GROUP:NNNN            a partition: position (u64), lease expiry (ms, u64), holder
//   m:GROUP:MEMBER          a member's heartbeat expiry (ms, u64)
//   k:GROUP:SEQUENCE        a parked commit (u64 keys big-endian, so they sort)

enum GroupKeys {
  /// A partition's stored state.
  struct Partition: Equatable {
    var position: UInt64
    /// When its lease lapses, in milliseconds since 1970 (0: free).
    var expires: UInt64
    var holder: String

    var bytes: [UInt8] { KeyField.bytes(position) + KeyField.bytes(expires) + Array(holder.utf8) }

    init(position: UInt64, expires: UInt64, holder: String) {
      self.position = position
      self.expires = expires
      self.holder = holder
    }

    init?(_ b: UnsafeRawBufferPointer) {
      guard b.count >= 16 else { return nil }
      position = KeyField.u64(b, at: 0) ?? 0
      expires = KeyField.u64(b, at: 8) ?? 0
      holder = String(decoding: b[16...], as: UTF8.self)
    }
  }

  static func now() -> UInt64 { UInt64(max(0, Date().timeIntervalSince1970 * 1000)) }
  static func ms(_ seconds: Double) -> UInt64 { UInt64(max(0, seconds * 1000)) }

  static func configKey(_ g: String) -> [UInt8] { Array("c:\(g)".utf8) }
  static func partitionKey(_ g: String, _ p: Int) -> [UInt8] { Array("p:\(g):".utf8) + KeyField.bytes(UInt64(p)) }
  static func member(_ g: String, _ m: String) -> [UInt8] { Array("m:\(g):\(m)".utf8) }
  static func memberPrefix(_ g: String) -> String { "m:\(g):" }
  static func parkedPrefix(_ g: String) -> [UInt8] { Array("k:\(g):".utf8) }
  static func parkedKey(_ g: String, _ sequence: UInt64) -> [UInt8] { parkedPrefix(g) + KeyField.bytes(sequence) }

  static func partitionCount(_ g: String, _ db: Database, _ txn: borrowing some TransactionReading & ~Copyable) throws
    -> Int?
  {
    try txn.withValue(db, key: configKey(g)) { KeyField.u64($0, at: 0).map(Int.init) } ?? nil
  }

  /// Applies `change` to each of partitions `ps` that `member` still holds, and writes it.
  static func change(
    _ g: String, _ ps: Set<Int>, heldBy member: String, _ db: Database, _ txn: WriteHandle,
    _ change: (inout Partition) -> Void
  ) throws {
    for p in ps {
      guard var record = try partition(g, p, db, txn), record.holder == member else { continue }
      change(&record)
      try txn.put(db, key: partitionKey(g, p), value: record.bytes)
    }
  }

  static func partition(_ g: String, _ p: Int, _ db: Database, _ txn: borrowing some TransactionReading & ~Copyable)
    throws -> Partition?
  {
    try txn.withValue(db, key: partitionKey(g, p)) { Partition($0) } ?? nil
  }

  /// A parked commit's stored form: last sequence, number, partition, attempts, time (ms),
  /// retry flag, then the error's UTF-8.
  static func encode(_ c: ParkedCommit) -> [UInt8] {
    var out = KeyField.bytes(c.lastSequence)
    out += KeyField.bytes(c.number)
    out += KeyField.bytes(UInt64(c.partition))
    out += KeyField.bytes(UInt64(c.attempts))
    out += KeyField.bytes(UInt64(max(0, c.parkedAt.timeIntervalSince1970 * 1000)))
    out.append(c.retry ? 1 : 0)
    out += Array(c.error.utf8)
    return out
  }

  static func decode(_ sequence: UInt64, _ b: UnsafeRawBufferPointer) -> ParkedCommit? {
    guard b.count >= 41, let last = KeyField.u64(b, at: 0), let number = KeyField.u64(b, at: 8),
      let partition = KeyField.u64(b, at: 16), let attempts = KeyField.u64(b, at: 24),
      let at = KeyField.u64(b, at: 32)
    else { return nil }
    return ParkedCommit(
      sequence: sequence, lastSequence: last, number: number, partition: Int(partition), attempts: Int(attempts),
      error: String(decoding: b[41...], as: UTF8.self), parkedAt: Date(timeIntervalSince1970: Double(at) / 1000),
      retry: b[40] == 1)
  }
}

extension EventStore {
  /// A member of the consumer group `name`: members of a group share its commits, each
  /// handled by one of them, one object's commits in order (``ConsumerGroup``).
  ///
  /// Members may run in several processes on one machine (the leases live in the store).
  ///
  /// - Parameters:
  ///   - name: the group, 1 to 200 bytes without `:`.
  ///   - member: this member's name in the group, the same rules; a member that starts
  ///     again under its name takes back its partitions at once.
  ///   - options: the lease, the partitions (fixed by the group's first member), attempts
  ///     and backoff.
  /// - Throws: ``ServiceError`` `invalidName`, or `invalidGroup` for options out of range
  ///   or a partition count other than the group's.
  public func consumerGroup(_ name: String, member: String, options: GroupOptions = GroupOptions()) throws
    -> ConsumerGroup
  {
    try ServiceError.checkName(name)
    try ServiceError.checkName(member)
    try options.check(group: name)
    guard let db = try groupsDatabase(create: true) else { throw StoreError.readOnly(path: path) }
    if let stored = try readStorage({ try GroupKeys.partitionCount(name, db, $0) }), stored != options.partitions {
      throw ServiceError.invalidGroup(name, "it has \(stored) partitions, not \(options.partitions)")
    }
    return ConsumerGroup(name: name, member: member, options: options, store: self, db: db)
  }

  /// Every consumer group of this handle's version, with its partitions, members alive,
  /// parked commits and lag.
  public func consumerGroups() throws -> [GroupStatus] {
    guard let db = try groupsDatabase(create: false) else { return [] }
    return try readStorageHandle { txn in
      let end = try GraphReader(txn: txn, dbs: dbs, model: model).logEnd().sequence
      var names: [String: Int] = [:]
      try txn.forEach(db, from: Array("c:".utf8)) { k, v in
        guard k.first == UInt8(ascii: "c") else { return false }
        names[String(decoding: k.dropFirst(2), as: UTF8.self)] = KeyField.u64(v, at: 0).map(Int.init) ?? 0
        return true
      }
      let now = GroupKeys.now()
      return try names.keys.sorted().map { name in
        var status = GroupStatus(name: name, partitions: [], members: [:], parked: [], lag: 0)
        for p in 0..<(names[name] ?? 0) {
          let r = try GroupKeys.partition(name, p, db, txn) ?? GroupKeys.Partition(position: 0, expires: 0, holder: "")
          let held = !r.holder.isEmpty && r.expires > now
          status.partitions.append(
            GroupPartition(
              index: p, position: r.position, holder: held ? r.holder : nil,
              expires: held ? Date(timeIntervalSince1970: Double(r.expires) / 1000) : nil))
        }
        let prefix = Array(GroupKeys.memberPrefix(name).utf8)
        try txn.forEach(db, from: prefix) { k, v in
          guard k.starts(with: prefix) else { return false }
          if let expires = BigEndianKey.decode(v), expires > now {
            status.members[String(decoding: k.dropFirst(prefix.count), as: UTF8.self)] = Date(
              timeIntervalSince1970: Double(expires) / 1000)
          }
          return true
        }
        status.parked = try parked(name, db, txn)
        status.lag = end - min(end, status.partitions.map(\.position).min() ?? end)
        return status
      }
    }
  }

  /// The commits group `group` parked, in log order.
  public func parkedCommits(group: String) throws -> [ParkedCommit] {
    try ServiceError.checkName(group)
    guard let db = try groupsDatabase(create: false) else { return [] }
    return try readStorage { try parked(group, db, $0) }
  }

  /// Marks a parked commit to be tried again by the member holding its partition.
  ///
  /// - Throws: ``ServiceError`` `notParked` when the group has parked no commit at `sequence`.
  public func retryParked(group: String, sequence: UInt64) throws {
    try changeParked(group: group, sequence: sequence) { txn, db, key, bytes in
      var marked = bytes
      marked[40] = 1
      try txn.put(db, key: key, value: marked)
    }
  }

  /// Forgets a parked commit: the group goes on without it.
  ///
  /// - Throws: ``ServiceError`` `notParked` when the group has parked no commit at `sequence`.
  public func skipParked(group: String, sequence: UInt64) throws {
    try changeParked(group: group, sequence: sequence) { txn, db, key, _ in _ = try txn.delete(db, key: key) }
  }

  private func changeParked(
    group: String, sequence: UInt64, _ change: (WriteHandle, Database, [UInt8], [UInt8]) throws -> Void
  ) throws {
    try ServiceError.checkName(group)
    if options.readOnly { throw StoreError.readOnly(path: path) }
    guard let db = try groupsDatabase(create: false) else { throw ServiceError.notParked(group, sequence) }
    let key = GroupKeys.parkedKey(group, sequence)
    try commits.run { batch, _ in
      guard let bytes = try batch.handle.get(db, key: key), bytes.count >= 41 else {
        throw ServiceError.notParked(group, sequence)
      }
      try change(batch.handle, db, key, bytes)
    }
  }

  private func parked(_ group: String, _ db: Database, _ txn: borrowing some TransactionReading & ~Copyable) throws
    -> [ParkedCommit]
  {
    let prefix = GroupKeys.parkedPrefix(group)
    var found: [ParkedCommit] = []
    try txn.forEach(db, from: prefix) { k, v in
      guard k.starts(with: prefix), let s = KeyField.u64(k, at: prefix.count) else { return false }
      if let c = GroupKeys.decode(s, v) { found.append(c) }
      return true
    }
    return found
  }

  /// The `groups.vN` database; `nil` when it does not exist and `create` is false (or the
  /// store is read-only).
  func groupsDatabase(create: Bool) throws -> Database? {
    try service.database(StoreDatabases.name("groups", version: dbs.version), create: create && !options.readOnly)
  }
}
