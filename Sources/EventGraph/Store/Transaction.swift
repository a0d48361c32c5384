import Foundation
internal import LMDB

/// The changes of one commit, made inside ``EventStore/write(metadata:_:)``.
///
/// Every method records events and applies them at once, so reads through the
/// transaction see its own changes. Inverses are kept by the store: linking a phone to a
/// person sets the phone's `addressBook` too, and moving the phone to another person
/// unlinks it from the first (an explicit `unlink` event). Delete rules run in ``delete(_:)``;
/// required values and counts are checked when the closure returns.
public final class Transaction: GraphReading {
  let projector: Projector
  /// The events so far.
  public private(set) var events: [Event] = []
  /// The commit's metadata; the closure may fill it in.
  public var metadata: CommitMetadata
  var isOpen = true
  /// The write transaction's batch: it gives identities and appends the commit.
  let batch: CommitBatch

  /// The projector's model, stored again so that a name lookup per `set` borrows it
  /// rather than copying it out of the projector.
  public let model: Model

  /// The idempotency key the transaction was opened with, which its writer looked up
  /// before the closure ran (``CommitBatch/firstCommit(withKey:)``); a key the closure sets
  /// instead is looked up when the commit is appended.
  let givenKey: String?

  /// A transaction recording into `batch` through `projector` (made by
  /// ``CommitBatch/transaction(metadata:sharingBuffers:)``).
  init(batch: CommitBatch, projector: Projector, metadata: CommitMetadata) {
    self.batch = batch
    self.projector = projector
    self.model = projector.model
    self.metadata = metadata
    self.givenKey = metadata.idempotencyKey
    events.reserveCapacity(Self.eventsExpected)
  }

  /// Room for the events of a small commit, made at once: one allocation, not one per doubling.
  private static let eventsExpected = 4

  func checkOpen() throws {
    if !isOpen { throw StoreError.transactionEnded }
  }

  /// Applies and records one event; a personal value is sealed first (or held until its
  /// subject is known: ``sealDeferred()``), so that no plain personal value reaches the
  /// projection or the log.
  private func emit(_ e: consuming Event) throws {
    hasWritten = true  // before: applying may write some keys and then refuse the event
    // No local copy of `e` on the common path: it would cost a retain and a release of
    // its value per event.
    if model.hasPersonalAttributes {
      guard let sealed = try sealingPersonal(e) else { return }
      var ends: (ObjectID, ObjectID)?
      switch sealed {
      case .link(let o, _, let t, _), .unlink(let o, _, let t): ends = (o, t)
      default: break
      }
      try emitSealed(sealed)
      // A link can move an object to another subject: its values follow at once, so that
      // an erasure later in this transaction meets them under the subject they are now.
      if let (o, t) = ends, model.entities.contains(where: { !$0.subjectPath.isEmpty }) {
        try resealIfMoved(o)
        try resealIfMoved(t)
      }
    } else {
      try emitSealed(e)
    }
  }

  /// Applies and records an event whose personal value is sealed already.
  func emitSealed(_ e: consuming Event) throws {
    try projector.apply(e)
    events.append(e)
  }

  /// Personal values set before their subject could be found (a `PhoneBook` number set
  /// before the phone book is linked to its person), in the order they were set.
  var deferredPersonal: [(object: ObjectID, attribute: PropertyID, value: Value)] = []
  /// The identity of the first object this transaction inserted, `nil` until one is.
  private var firstInserted: UInt64?

  /// Whether this transaction may have written to LMDB: an event was applied or tried
  /// (the commit, the history and the object records follow only events).
  private(set) var hasWritten = false

  /// Notes a write made beside the events (a checkpoint).
  func markWritten() { hasWritten = true }

  // MARK: - Reading (sees this transaction's changes)

  public func object(_ id: ObjectID) throws -> ObjectState? {
    try checkOpen()
    guard model.hasPersonalAttributes, let state = try projector.state(id) else { return try projector.state(id) }
    return try openPersonal(state)
  }

  /// The entity of an object alive now (in this transaction), `nil` when it does not
  /// exist: a check that decodes none of its values, as ``object(_:)`` does.
  package func liveEntityID(of id: ObjectID) throws -> EntityID? {
    try checkOpen()
    return try projector.liveEntity(id)
  }

  public func entityID(of id: ObjectID) throws -> EntityID? {
    try checkOpen()
    return try projector.reader.entity(of: id)
  }

  public func related(_ id: ObjectID, _ relationship: PropertyID) throws -> [ObjectID] {
    try checkOpen()
    return try projector.reader.related(id, relationship)
  }

  public func objects(of entity: EntityID) throws -> [ObjectID] {
    try checkOpen()
    return try projector.reader.objects(of: entity)
  }

  // MARK: - Inserting and setting

  /// Inserts a new object; attributes with a default get it (as `set` events).
  ///
  /// - Returns: the new object's identity.
  @discardableResult
  public func insert(_ entityName: String) throws -> ObjectID {
    try insert(entityName, defaultsExcept: [])
  }

  /// Inserts a new object, setting the defaults of every attribute but `given` (which the
  /// caller sets next, so the log holds no default that is overwritten at once).
  func insert(_ entityName: String, defaultsExcept given: Set<String>) throws -> ObjectID {
    try insert(try insertable(entityName)) { given.contains($0) }
  }

  /// The entity named `entityName`, which an insert may make an object of.
  private func insertable(_ entityName: String) throws -> Entity {
    try checkOpen()
    guard let e = model.entity(named: entityName) else { throw StoreError.unknownEntity(entityName) }
    guard !e.isAbstract else { throw StoreError.abstractEntity(entityName) }
    return e
  }

  /// The identity for an insert; the first is kept, to name in a refusal the objects this
  /// commit inserted (``namingInserted(_:)``).
  private func allocate() throws -> ObjectID {
    let n = try batch.allocateObject()
    if firstInserted == nil { firstInserted = n }
    return ObjectID(n)
  }

  /// `error` with the objects this transaction inserted named by their order of insertion
  /// instead of their identities: a refused commit's identities were never committed, and
  /// the next commit gives them to other objects.
  func namingInserted(_ error: any Error) -> any Error {
    guard let first = firstInserted, let next = batch.nextObject, let e = error as? StoreError else { return error }
    return e.renamingObjects { o in
      guard o.origin == nil, o.id.rawValue >= first, o.id.rawValue < next else { return o }
      var named = o
      named.origin = .inserted(Int(o.id.rawValue - first) + 1)
      return named
    }
  }

  /// Inserts an object of `e` with the defaults of the attributes whose names are not `given`.
  private func insert(_ e: Entity, given: (String) -> Bool) throws -> ObjectID {
    let id = try allocate()
    try emit(.insert(id, entity: e.id))
    for a in e.attributes {
      if let d = a.defaultValue, !given(a.name) { try emit(.set(id, attribute: a.id, value: d)) }
    }
    return id
  }

  /// Inserts a new object with attribute values already resolved against its entity: the
  /// insert, the defaults of the attributes not given, and a `set` per given value (an
  /// upcast's destination drafts take this path, with no name lookups).
  ///
  /// - Parameter identity: the identity to give it (an upcast keeps a source object's);
  ///   when `nil`, the next one.
  package func insert(_ e: Entity, values: [(Attribute, Value?)], identity: ObjectID? = nil) throws -> ObjectID {
    try checkOpen()
    guard !e.isAbstract else { throw StoreError.abstractEntity(e.name) }
    let id = try identity ?? allocate()
    try emit(.insert(id, entity: e.id))
    for a in e.attributes {
      // A short list: a scan costs less than hashing.
      if let d = a.defaultValue, !values.contains(where: { $0.0.id == a.id && $0.1 != nil }) {
        try emit(.set(id, attribute: a.id, value: d))
      }
    }
    for (a, v) in values {
      guard let v else { continue }
      guard Self.owns(e, a) else { throw StoreError.unknownProperty(entity: e.name, property: a.name) }
      do {
        try emit(.set(id, attribute: a.id, value: try v.converted(to: a.type)))
      } catch let error as ValueError {
        throw StoreError.wrongType(object: objectName(id), attribute: a.name, detail: error.description)
      }
    }
    return id
  }

  /// Inserts a new object of `e`, an entity of this transaction's model, with values of
  /// its attributes by ``PropertyID`` (a record's insert takes this path: no names, and no
  /// attribute descriptions copied).
  func insert(_ e: Entity, valuesByID values: [(PropertyID, Value)]) throws -> ObjectID {
    try checkOpen()
    guard !e.isAbstract else { throw StoreError.abstractEntity(e.name) }
    let id = try allocate()
    try emit(.insert(id, entity: e.id))
    for a in e.attributes {
      if let d = a.defaultValue, !values.contains(where: { $0.0 == a.id }) {
        try emit(.set(id, attribute: a.id, value: d))
      }
    }
    for (p, v) in values {
      guard let type = e.attributeTypes[Int(p.rawValue)] else {
        throw StoreError.notAnAttribute(entity: e.name, property: "#\(p.rawValue)")
      }
      try set(id, p, type, v)
    }
    return id
  }

  /// Inserts a new object and sets the given attributes.
  @discardableResult
  public func insert(_ entityName: String, _ values: KeyValuePairs<String, Value?>) throws -> ObjectID {
    // A short list: a scan, and only for attributes with defaults, costs less than a set.
    let id = try insert(try insertable(entityName)) { name in values.contains { $0.key == name && $0.value != nil } }
    for (k, v) in values { try set(id, k, v) }
    return id
  }

  /// Sets an attribute (`nil` removes the value).
  ///
  /// A number is converted to the
  /// attribute's type when it fits exactly.
  ///
  /// - Throws: `wrongType` and the naming errors.
  public func set(_ id: ObjectID, _ attribute: String, _ value: Value?) throws {
    try checkOpen()
    let entity = try liveEntity(id)
    let slot = try model.attributeSlot(attribute, of: entity)
    try set(id, slot.id, slot.type, value)
  }

  /// Sets an attribute already resolved against the object's entity (no name lookup).
  package func set(_ id: ObjectID, attribute a: Attribute, _ value: Value?) throws {
    try checkOpen()
    let entity = try liveEntity(id)
    guard let e = model.entity(entity), Self.owns(e, a) else {
      throw StoreError.unknownProperty(entity: model.entity(entity)?.name ?? "?", property: a.name)
    }
    try set(id, a.id, a.type, value)
  }

  /// Whether `a` is the attribute of `e` with its identifier: the same name and type (what
  /// a set relies on), compared without comparing the whole description.
  private static func owns(_ e: Entity, _ a: Attribute) -> Bool {
    guard case .attribute(let own)? = e.property(a.id)?.kind else { return false }
    return own.type == a.type && own.name == a.name
  }

  /// The entity of a live object.
  ///
  /// Only the entity: a copy of the object's state held while the projector changes the
  /// object would make each change copy all its values.
  private func liveEntity(_ id: ObjectID) throws -> EntityID {
    guard let e = try projector.liveEntity(id) else { throw StoreError.noSuchObject(objectName(id)) }
    return e
  }

  /// Sets attribute `attribute` (of type `type`) of a live object, by ID: the attribute
  /// itself (its name, default, renaming identifier) is not copied on this path.
  private func set(_ id: ObjectID, _ attribute: PropertyID, _ type: AttributeType, _ value: Value?) throws {
    // The value is read through optional chaining, never bound, on the common path (it
    // has the attribute's type): a binding copied it, a retain and a release per value.
    if let found = value?.type, found != type || value?.isFinite == false, let value {
      let converted: Value
      do {
        converted = try value.converted(to: type)
      } catch {
        let name = try projector.liveEntity(id).flatMap { model.entity($0)?.property(attribute)?.name }
        throw StoreError.wrongType(object: objectName(id), attribute: name ?? "?", detail: error.description)
      }
      return try setConverted(id, attribute, converted)
    }
    try setConverted(id, attribute, value)
  }

  /// Sets a value of the attribute's type, unless the object holds it already (a sealed
  /// value is always set: its bytes differ each time it is sealed).
  private func setConverted(_ id: ObjectID, _ attribute: PropertyID, _ v: Value?) throws {
    if v?.isSealed != true, try projector.value(id, attribute) == v { return }
    try emit(.set(id, attribute: attribute, value: v))
  }

  // MARK: - Relationships

  /// Adds `target` to a relationship of `id` (at `position` in an ordered one), keeping
  /// the inverse.
  ///
  /// A to-one is replaced; an object already in a to-many stays once (moved
  /// to `position` when one is given).
  public func link(_ id: ObjectID, _ relationship: String, _ target: ObjectID, at position: Int? = nil) throws {
    try checkOpen()
    // Entities only, as every relationship change here: no object's values are decoded.
    let r = try model.relationship(relationship, of: try liveEntity(id))
    let targetEntity = try liveEntity(target)
    try checkDestination(target, targetEntity, of: id, r)
    // Lookups, not the list: a to-many may have many members.
    let reader = projector.reader
    if let position, !r.isOrdered {
      throw StoreError.invalidPosition(
        object: objectName(id), relationship: r.name, position: position, count: try reader.relatedCount(id, r))
    }
    if try reader.hasLink(id, r, target) {
      guard let position, try reader.orderedPosition(id, LinkSlot(r.id), of: target) != position else { return }
      try emit(.unlink(id, relationship: r.id, target: target))
      try checkPosition(position, count: try reader.relatedCount(id, r), id, r)
      try emit(.link(id, relationship: r.id, target: target, position: position))
      return
    }
    if let position { try checkPosition(position, count: try reader.relatedCount(id, r), id, r) }
    // A to-one on this side is replaced.
    if !r.isToMany, let old = try related(id, r.id).first { try emit(.unlink(id, relationship: r.id, target: old)) }
    try releaseFromPreviousOwner(target, targetEntity, r)
    try emit(.link(id, relationship: r.id, target: target, position: position))
  }

  /// Refuses a target whose entity the relationship does not lead to.
  private func checkDestination(_ t: ObjectID, _ entity: EntityID, of id: ObjectID, _ r: Relationship) throws {
    guard model.isKind(entity, of: r.destination) else {
      throw StoreError.wrongDestination(
        object: objectName(id), relationship: r.name, target: objectName(t),
        expected: model.entity(r.destination)?.name ?? "?")
    }
  }

  /// A to-one on the other side moves the target away from its previous owner (an
  /// explicit unlink), before it is linked to its new one.
  private func releaseFromPreviousOwner(_ t: ObjectID, _ entity: EntityID, _ r: Relationship) throws {
    if let inv = r.inverse, case .relationship(let back)? = model.entity(entity)?.property(inv)?.kind,
      !back.isToMany, let previous = try related(t, inv).first
    {
      try emit(.unlink(t, relationship: inv, target: previous))
    }
  }

  private func checkPosition(_ p: Int, count: Int, _ id: ObjectID, _ r: Relationship) throws {
    guard p >= 0 && p <= count else {
      throw StoreError.invalidPosition(object: objectName(id), relationship: r.name, position: p, count: count)
    }
  }

  /// Removes `target` from a relationship of `id` (and `id` from the inverse); nothing
  /// happens when it is not there.
  public func unlink(_ id: ObjectID, _ relationship: String, _ target: ObjectID) throws {
    try checkOpen()
    let r = try model.relationship(relationship, of: try liveEntity(id))
    guard try projector.reader.hasLink(id, r, target) else { return }
    try emit(.unlink(id, relationship: r.id, target: target))
  }

  /// Sets a to-one relationship (`nil` empties it).
  public func setRelationship(_ id: ObjectID, _ relationship: String, to target: ObjectID?) throws {
    try checkOpen()
    let r = try model.relationship(relationship, of: try liveEntity(id))
    if let target { return try link(id, relationship, target) }
    for old in try related(id, r.id) { try emit(.unlink(id, relationship: r.id, target: old)) }
  }

  /// Makes a to-many relationship hold exactly `targets`, in this order when ordered.
  public func setRelationship(_ id: ObjectID, _ relationship: String, to targets: [ObjectID]) throws {
    try checkOpen()
    let r = try model.relationship(relationship, of: try liveEntity(id))
    let wanted = Set(targets)
    for old in try related(id, r.id) where !wanted.contains(old) {
      try emit(.unlink(id, relationship: r.id, target: old))
    }
    guard r.isOrdered else {
      for t in targets { try link(id, relationship, t) }
      return
    }
    // The list read once and followed in memory: a target already at its place is left
    // alone without asking the store where it stands (which walks the list).
    var current = try related(id, r.id)
    for (i, t) in targets.enumerated() {
      if i < current.count && current[i] == t { continue }
      try link(id, relationship, t, at: i)
      if let j = current.firstIndex(of: t) { current.remove(at: j) }
      current.insert(t, at: min(i, current.count))
    }
  }

  /// Makes a relationship already resolved against the object's entity hold exactly
  /// `targets` (an upcast's relationship mappings take this path, with no name lookups and
  /// one read of the current targets).
  package func setRelationship(_ id: ObjectID, _ r: Relationship, to targets: [ObjectID]) throws {
    try checkOpen()
    // Entities only: neither object's values are decoded on this path.
    let entity = try liveEntity(id)
    guard case .relationship(let own)? = model.entity(entity)?.property(r.id)?.kind, own == r else {
      throw StoreError.unknownProperty(entity: model.entity(entity)?.name ?? "?", property: r.name)
    }
    let current = try related(id, r.id)
    if current == targets { return }
    // Order and replacement rules live in `link`: only an unordered to-many is done here.
    guard r.isToMany && !r.isOrdered else {
      return r.isToMany
        ? try setRelationship(id, r.name, to: targets) : try setRelationship(id, r.name, to: targets.first)
    }
    // Usually a few objects on each side: scans cost less than hashing them into sets.
    let few = targets.count <= 8 && current.count <= 8
    let wanted = few ? nil : Set(targets)
    let have = few ? nil : Set(current)
    for old in current where !(wanted?.contains(old) ?? targets.contains(old)) {
      try emit(.unlink(id, relationship: r.id, target: old))
    }
    for t in targets where !(have?.contains(t) ?? current.contains(t)) {
      let targetEntity = try liveEntity(t)
      try checkDestination(t, targetEntity, of: id, r)
      try releaseFromPreviousOwner(t, targetEntity, r)
      try emit(.link(id, relationship: r.id, target: t, position: nil))
    }
  }

  // MARK: - Deleting

  /// Deletes an object, applying each relationship's delete rule: `cascade` deletes the
  /// targets too, `deny` refuses while the relationship is not empty, `nullify` and
  /// `noAction` remove the links.
  ///
  /// Every effect is an event of this commit.
  public func delete(_ object: some ObjectReference) throws {
    try checkOpen()
    var deleting: Set<ObjectID> = []
    try delete(object.objectID, deleting: &deleting)
  }

  private func delete(_ id: ObjectID, deleting: inout Set<ObjectID>) throws {
    guard deleting.insert(id).inserted, let s = try object(id) else { return }
    guard let e = model.entity(s.entity) else { throw StoreError.corrupt("unknown entity id \(s.entity.rawValue)") }
    for r in e.relationships where r.deleteRule == .deny {
      if let t = try related(id, r.id).first(where: { !deleting.contains($0) }) {
        throw StoreError.validation(
          object: objectName(id), property: r.name, rule: .deny,
          message: "delete denied: still related to \(display(t)) (deleteRule deny)")
      }
    }
    for r in e.relationships {
      for t in try related(id, r.id) {
        guard try object(t) != nil else { continue }  // already deleted in this cascade
        try emit(.unlink(id, relationship: r.id, target: t))
        if r.deleteRule == .cascade { try delete(t, deleting: &deleting) }
      }
    }
    // Relationships without an inverse that point at this object.
    for (slot, source) in try projector.reader.allLinks(id) where slot.isReverse {
      try emit(.unlink(source, relationship: slot.relationship, target: id))
    }
    try emit(.delete(id))
  }

  /// Deletes an object and its links, and nothing else: no delete rule runs (an upcast's
  /// mapping, not the destination model, says which objects exist).
  ///
  /// The events are those a delete with `nullify` rules emits: an unlink per link of the
  /// object, relationship by relationship, then one per link without an inverse that points
  /// at it, then the delete.
  package func deleteIgnoringRules(_ id: ObjectID) throws {
    try checkOpen()
    guard try projector.liveEntity(id) != nil else { return }
    // Links are listed in key order: the object's relationships by identifier (each in its
    // own order), then the links without an inverse that point at it (reverse slots).
    for (slot, t) in try projector.reader.allLinks(id) {
      if slot.isReverse {
        try emit(.unlink(t, relationship: slot.relationship, target: id))
      } else {
        try emit(.unlink(id, relationship: slot.relationship, target: t))
      }
    }
    try emit(.delete(id))
  }

  // MARK: - Ending

  /// Ends the transaction's use (its closure returned).
  func close() { isOpen = false }
}
