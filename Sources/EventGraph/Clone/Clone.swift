import Foundation
internal import LMDB

/// What ``EventStore/clone(root:policy:asOf:into:overrides:metadata:progress:)`` made.
public struct CloneResult: Sendable, Hashable {
  /// The copy of the root.
  public let root: ObjectID
  /// Every copied object: the original's identity → the copy's.
  public let identities: [ObjectID: ObjectID]
  /// The one commit that holds the copy, in the store it was written to.
  public let commit: CommitInfo
  /// The sequence of the source the copy was read at (the end of its log for "now").
  public let sourceSequence: UInt64

  /// The copies, as many as the originals copied.
  public var count: Int { identities.count }
}

extension EventStore {
  /// Copies the subgraph under `root`: every object reached along `deep` relationships
  /// gets a copy with a fresh identity, written as one commit whose metadata records
  /// `clonedFrom: root`.
  ///
  /// The second seed's hand-written deep copy of a company, in one call:
  ///
  /// ```swift
  /// let copy = try store.clone(root: acme, overrides: ["Company.name": .appending(" (copy)")])
  /// // copy.root is the new company; its employees are new, in the same order, each
  /// // `manager` points at the copy of the manager, `department`s are shared.
  /// ```
  ///
  /// Each relationship has a ``CopyPolicy`` (see
  /// ``Relationship/defaultCopyPolicy(in:)`` for the defaults):
  /// - `deep`: the targets are copied too, recursively;
  /// - `reference`: the copy links to the copy of a target when the target is copied,
  ///   else to the original target (which then has the copy in its inverse);
  /// - `skip`: the copy has none, unless the other side of a link between two copied
  ///   objects keeps it (a link is one fact with two sides; to drop a two-way link
  ///   between copies, skip both sides).
  ///
  /// The copy is made by replaying the subgraph's state as events: ordered
  /// relationships keep their order, cycles and self-references are copied once and point
  /// inside the copy, inverses are kept by the store on both sides. The subgraph is read
  /// object by object from the projection, or, for a past sequence, from each object's own
  /// history: the cost is the subgraph's, never the log's. Within one store the subgraph
  /// is read and written in the same write transaction, so it cannot change in between.
  ///
  /// - Parameters:
  ///   - reference: the object to copy (an `ObjectID`, a `Ref` or a `Stored` record).
  ///   - policy: copy policies by `"Entity.relationship"` (that entity and its
  ///     sub-entities) or bare `"relationship"` (every entity that has it), over the
  ///     model's defaults; the nearest qualified key wins.
  ///   - asOf: copy the subgraph as it was after this sequence (default: now).
  ///   - target: write the copy into another store with the same model (default: this
  ///     one). Every reference must then lead inside the copy.
  ///   - overrides: attribute values replaced or computed for the copies, by
  ///     `"Entity.attribute"` or `"attribute"` (see ``AttributeOverride``).
  ///   - metadata: the commit's metadata; `clonedFrom` is set to `root`, and a copy into
  ///     another store records the source store's ID in `extra["clonedFromStore"]`.
  ///   - progress: told the number of objects read so far while the subgraph is collected
  ///     (every 4,096 objects), for a progress display.
  /// - Returns: the new root, the identity map, and the commit.
  /// - Throws: nothing is written when the call throws.
  ///   ``ErrorCode/noSuchObject`` (unknown root), ``ErrorCode/deletedObject``,
  ///   ``ErrorCode/sequenceBeyondLog``,
  ///   ``ErrorCode/modelMismatch``, an unknown name in `policy` or
  ///   `overrides` (``ErrorCode/unknownProperty`` and its kin, naming
  ///   the entity and the name), ``ErrorCode/referenceWouldMove``,
  ///   ``ErrorCode/referenceOutsideStore``,
  ///   ``ErrorCode/referenceToDeleted``, a value of the
  ///   wrong type from an override, the model's validation of the copies, or what an
  ///   override throws.
  @discardableResult
  public func clone(
    root reference: some ObjectReference,
    policy: [String: CopyPolicy] = [:],
    asOf: UInt64? = nil,
    into target: EventStore? = nil,
    overrides: [String: AttributeOverride] = [:],
    metadata: CommitMetadata = .init(),
    progress: @escaping (Int) -> Void = { _ in }
  ) throws -> CloneResult {
    let root = reference.objectID
    var meta = metadata
    meta.clonedFrom = root
    let time = Date()
    guard let target, target.storeID != storeID else {
      // One store: read and write in the same transaction.
      let written = try writeFresh(metadata: meta) { reader in
        let plan = try ClonePlan.collect(
          root: root, reader: reader, asOf: asOf, policy: policy, overrides: overrides, crossStore: false,
          progress: progress)
        // Only a store with personal attributes has a keyring, and sealed values to look at.
        let reseal = Self.resealing(reader, path: path)
        return try plan.replay(firstIdentity: try reader.lastObjectID() + 1, time: time, reseal: reseal)
      }
      return try CloneResult(written, root: root)
    }
    guard target.model == model else {
      throw StoreError.modelMismatch(
        source: "\(model.name) v\(model.version)",
        target: "\(target.model.name) v\(target.model.version)"
          + (target.model.version == model.version ? " (defined differently)" : ""))
    }
    meta.extra["clonedFromStore"] = storeID
    let plan = try read { s in
      try ClonePlan.collect(
        root: root, reader: s.reader, asOf: asOf, policy: policy, overrides: overrides, crossStore: true,
        progress: progress)
    }
    try plan.refuseSealedValues(target: target.path)
    let written = try target.writeFresh(metadata: meta) { reader in
      try plan.replay(firstIdentity: try reader.lastObjectID() + 1, time: time)
    }
    return try CloneResult(written, root: root)
  }
}

extension EventStore {
  /// How a clone in this store seals a copied personal value under its copied subject:
  /// opened with the store's keys and sealed again, keeping its blind hash or its lack; an
  /// erased value stays as it is (nothing opens it, under either subject).
  ///
  /// - Throws: ``ErrorCode/keyRequired`` when the store was opened without its key.
  fileprivate static func resealing(_ reader: GraphReader<WriteHandle>, path: String) -> CloneSealing? {
    guard let ring = reader.dbs.keyring else { return nil }
    let locked = StoreError.keyRequired(
      path: path, detail: "the copy holds personal values: open it with its key-encryption key to copy them")
    return CloneSealing(
      reseal: { sealed, subject in
        let opened = try ring.open(sealed, in: reader.txn)
        if case .sealed(let still) = opened {
          guard still.state == .erased else { throw locked }
          return sealed
        }
        return try ring.seal(opened, subject: subject, hashed: !sealed.blindHash.isEmpty, in: reader.txn)
      },
      seal: { value, subject, hashed in
        guard ring.kek != nil else { throw locked }
        return try ring.seal(value, subject: subject, hashed: hashed, in: reader.txn)
      })
  }
}

/// How a clone seals the copies' personal values: a sealed value again under another
/// subject, and a plain one (an override's) under its subject.
struct CloneSealing {
  let reseal: (SealedValue, ObjectID) throws -> SealedValue
  let seal: (Value, ObjectID, _ hashed: Bool) throws -> SealedValue
}

extension CloneResult {
  fileprivate init(_ w: (value: (UInt64, [ObjectID: ObjectID]), commit: CommitInfo), root: ObjectID) throws {
    guard let copy = w.value.1[root] else { throw StoreError.corrupt("a clone of #\(root.rawValue) lost its root") }
    self.init(root: copy, identities: w.value.1, commit: w.commit, sourceSequence: w.value.0)
  }
}

/// A subgraph read and checked for a clone, with the call's policies and overrides.
struct ClonePlan: Sendable {
  let model: Model
  let graph: Subgraph
  let policies: CopyPolicyTable
  let overrides: AttributeOverrideTable
  /// The sequence the subgraph was read at.
  let sequence: UInt64

  /// Checks the input and collects the subgraph; every error comes before any write.
  static func collect<T: TransactionReading>(
    root: ObjectID, reader: GraphReader<T>, asOf: UInt64?, policy: [String: CopyPolicy],
    overrides: [String: AttributeOverride], crossStore: Bool, progress: @escaping (Int) -> Void = { _ in }
  ) throws -> ClonePlan {
    let sequence = try VersionReader.resolve(asOf, reader: reader)
    var versions = VersionReader(reader: reader, asOf: sequence)
    versions.progress = progress
    let (entity, member) = try versions.requireRoot(root)
    let policies = try CopyPolicyTable(model: reader.model, overrides: policy, scope: entity)
    let attributes = try AttributeOverrideTable(model: reader.model, overrides: overrides, scope: entity)
    let graph = try versions.collect(root: root, rootMember: member, policies: policies)
    try graph.checkReferences(policies: policies, reader: reader, crossStore: crossStore)
    return ClonePlan(
      model: reader.model, graph: graph, policies: policies, overrides: attributes,
      sequence: try sequence ?? reader.logEnd().sequence)
  }
}

extension ClonePlan {
  /// Refuses a copy into another store of a personal value: sealed under this store's
  /// keys, it would read as erased there (Docs/privacy.md).
  ///
  /// - Throws: ``ErrorCode/personalDataAcrossStores`` naming the first such object and
  ///   attribute.
  func refuseSealedValues(target: String) throws {
    for state in graph.states {
      for (p, value) in state.values.enumerated() {
        guard case .sealed? = value else { continue }
        let entity = model.entity(state.entity)
        throw StoreError.personalDataAcrossStores(
          object: StoreError.ObjectName(entity: entity?.name, id: state.id),
          attribute: entity?.property(PropertyID(rawValue: UInt16(p)))?.name ?? "#\(p)", target: target)
      }
    }
  }

  /// The copy's events, with identities from `firstIdentity` on, and their projection.
  ///
  /// A personal value whose subject is copied too is sealed again, by `reseal`, under the
  /// copy of its subject: erasing the copy's subject then erases the copy's values, and
  /// erasing the original's leaves the copy's readable (Docs/privacy.md). A plain value an
  /// override gave a personal attribute is sealed under the copy's subject: the copy itself,
  /// or the copy of (or else the original) subject the original's sealed values name.
  ///
  /// - Returns: the sequence read and the identity map (original → copy), the events,
  ///   and the records they make.
  func replay(firstIdentity: UInt64, time: Date, reseal: CloneSealing? = nil) throws
    -> (value: (UInt64, [ObjectID: ObjectID]), events: CommitCodec.EventBody, fresh: FreshObjects)
  {
    let identities = (0..<UInt64(graph.count)).map { ObjectID(firstIdentity + $0) }
    let replay = SubgraphEvents(model: model, graph: graph, links: .policies(policies), identities: identities)
    let overrides = self.overrides
    let graph = self.graph
    let model = self.model
    let made = try replay.states(
      override: overrides.isEmpty
        ? nil
        : { i, entity, attribute in
          guard let o = overrides.override(entity.id, attribute.id) else { return nil }
          let context = AttributeOverride.Context(
            model: model, entity: entity, attribute: attribute, source: graph.ids[i], copy: identities[i],
            isRoot: i == 0, original: graph.version(i), time: time)
          guard let value = try o.compute(context) else { return .some(nil) }
          do throws(ValueError) {
            return .some(try value.converted(to: attribute.type))
          } catch {
            // The copy's identity was never committed: it is named by its original.
            let copy = StoreError.ObjectName(entity: entity.name, id: identities[i], origin: .copy(of: graph.ids[i]))
            throw StoreError.wrongType(object: copy, attribute: attribute.name, detail: error.description)
          }
        })
    var copied = made
    if let reseal {
      var copyOf: [ObjectID: ObjectID] = [:]
      for (i, o) in graph.ids.enumerated() { copyOf[o] = identities[i] }
      for i in copied.indices {
        guard let entity = model.entity(copied[i].entity) else { continue }
        for (p, value) in copied[i].values.enumerated() {
          let a = PropertyID(rawValue: UInt16(p))
          switch value {
          case .sealed(let sealed)?:
            guard let subject = copyOf[sealed.subject] else { continue }
            copied[i].set(a, .sealed(try reseal.reseal(sealed, subject)))
          case let plain? where p < entity.personal.count && entity.personal[p]:
            // Only an override puts a plain value here: the originals' are sealed.
            let subject: ObjectID
            if entity.subjectPath.isEmpty {
              subject = identities[i]
            } else if let named = graph.states[i].values.lazy.compactMap({ v -> ObjectID? in
              if case .sealed(let s)? = v { return s.subject }
              return nil
            }).first {
              subject = copyOf[named] ?? named
            } else {
              let copy = StoreError.ObjectName(entity: entity.name, id: identities[i], origin: .copy(of: graph.ids[i]))
              throw StoreError.noSubject(
                object: copy, attribute: entity.property(a)?.name ?? "#\(p)",
                detail: "an override gives it a value, and the copy's subject is not known until it is linked")
            }
            let hashed =
              entity.indexed[p]
              || model.uniqueness[Int(entity.id.rawValue)].contains { c in c.attributes.contains { $0.id == a } }
            copied[i].set(a, .sealed(try reseal.seal(plain, subject, hashed)))
          default: continue
          }
        }
      }
    }
    let states = copied
    // Encoded as they are made: the log record is all that is kept of them.
    var events = CommitCodec.EventBody(capacity: graph.count * 96 + graph.targets.count * 12)
    try replay.emitObjects(states) { events.append($0) }
    var fresh = FreshObjects(replay, states: states)
    try replay.emitLinks(
      { e in
        events.append(e)
        try fresh.follow(e)
      }, kept: { fresh.keep($0, $1, $2, $3) })
    fresh.finish()
    var map: [ObjectID: ObjectID] = [:]
    map.reserveCapacity(identities.count)
    for (i, o) in graph.ids.enumerated() { map[o] = identities[i] }
    return ((sequence, map), events, fresh)
  }
}
