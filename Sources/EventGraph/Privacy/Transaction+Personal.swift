/// Personal values in a transaction (Docs/privacy.md): sealed under their subject's key
/// before the projection or the log sees them, opened for the transaction's own reads.
extension Transaction {
  /// The store's keyring, or the error that a store without its key gets.
  func requireKeyring() throws -> Keyring {
    guard let ring = batch.dbs.keyring, ring.kek != nil else {
      throw StoreError.keyRequired(
        path: batch.path,
        detail: "its model has personal attributes: open it with its key-encryption key to write")
    }
    return ring
  }

  /// `e` with its personal value sealed; `nil` when the value is held back until its
  /// subject is linked (``deferredPersonal``), and `e` itself for any other event.
  ///
  /// A value that comes sealed (an upcast's mapping copies it from the source version)
  /// keeps its bytes when it is sealed as the attribute asks: under the object's subject,
  /// with a blind hash exactly when the attribute is indexed or unique. Otherwise it is
  /// opened and sealed again; an erased one stays erased, without a blind hash. A sealed
  /// value given to an attribute that is not personal is opened (erased: no value).
  func sealingPersonal(_ e: Event) throws -> Event? {
    guard case .set(let o, let a, let value) = e else { return e }
    guard let entityID = try projector.liveEntity(o), let entity = model.entity(entityID),
      Int(a.rawValue) < entity.personal.count
    else { return e }
    guard entity.personal[Int(a.rawValue)] else {
      guard case .sealed(let sealed)? = value else { return e }
      return .set(o, attribute: a, value: try plainValue(of: sealed))
    }
    deferredPersonal.removeAll { $0.object == o && $0.attribute == a }
    guard let value else { return e }
    let ring = try requireKeyring()
    var plain = value
    if case .sealed(let sealed) = value {
      let opened = try ring.open(sealed, in: batch.handle)
      guard !opened.isSealed else {
        let erased = SealedValue(type: sealed.type, subject: sealed.subject, ciphertext: sealed.ciphertext)
        return erased == sealed ? e : .set(o, attribute: a, value: .sealed(erased))
      }
      plain = opened
    }
    // The rules see the plain value here: the commit's validation finds it sealed.
    if case .attribute(let attribute)? = entity.property(a)?.kind, let broken = attribute.rules?.breach(plain) {
      throw StoreError.validation(
        object: objectName(o), property: attribute.name, rule: broken.rule, message: broken.message)
    }
    guard let subject = try subject(of: o, entity) else {
      deferredPersonal.append((o, a, plain))
      return nil
    }
    if case .sealed(let sealed) = value, sealed.subject == subject,
      sealed.blindHash.isEmpty != isHashed(a, of: entity)
    {
      return e
    }
    return .set(o, attribute: a, value: .sealed(try seal(plain, of: o, a, entity, subject: subject, ring)))
  }

  /// A sealed value opened for an attribute that is not personal: `nil` when erased.
  private func plainValue(of sealed: SealedValue) throws -> Value? {
    let opened = try requireKeyring().open(sealed, in: batch.handle)
    guard case .sealed = opened else { return opened }
    return nil
  }

  /// Whether a personal attribute keeps a blind hash beside its sealed value: it is
  /// indexed or unique.
  private func isHashed(_ a: PropertyID, of entity: Entity) -> Bool {
    entity.indexed[Int(a.rawValue)]
      || model.uniqueness[Int(entity.id.rawValue)].contains { c in c.attributes.contains { $0.id == a } }
  }

  /// Seals the values held back for want of a subject, now that the commit's links are
  /// made; called before the commit is validated.
  ///
  /// - Throws: ``ErrorCode/noSubject`` for a live object whose subject path still
  ///   leads nowhere.
  func sealDeferred() throws { try sealDeferred(only: nil) }

  /// Seals the values held back whose subject is now `only` (every one held when `nil`),
  /// keeping the others held.
  private func sealDeferred(only: ObjectID?) throws {
    let held = deferredPersonal
    deferredPersonal = []
    for (o, a, value) in held {
      guard let entityID = try projector.liveEntity(o), let entity = model.entity(entityID) else { continue }
      let found = try subject(of: o, entity)
      if let only, found != only {
        deferredPersonal.append((o, a, value))
        continue
      }
      guard let subject = found else {
        let name = entity.property(a)?.name ?? "#\(a.rawValue)"
        let path = entity.subjectPath.compactMap { entity.property($0)?.name }.joined(separator: ".")
        throw StoreError.noSubject(
          object: objectName(o), attribute: name,
          detail: "its subject is reached through '\(path)', which leads to no object at the end of the commit")
      }
      let sealed = try seal(value, of: o, a, entity, subject: subject, try requireKeyring())
      try emitSealed(.set(o, attribute: a, value: .sealed(sealed)))
    }
  }

  /// Seals again, under its subject now, each personal value of `o` sealed under another.
  ///
  /// Called for both ends of every link and unlink (a phone moved to another person), so
  /// that erasing the new subject erases them and erasing the old one does not. An object
  /// left without a subject keeps its values under the old one, whose data they are; an
  /// erased value stays erased.
  ///
  /// Only the objects at either end of a link are looked at: an object whose subject is
  /// two steps away keeps its values under the old subject when the middle step moves.
  ///
  /// - Throws: ``ErrorCode/erasedSubject`` for a value moved to an erased subject.
  func resealIfMoved(_ o: ObjectID) throws {
    guard let entityID = try projector.liveEntity(o), let entity = model.entity(entityID),
      entity.hasPersonalAttributes, !entity.subjectPath.isEmpty, let subject = try subject(of: o, entity)
    else { return }
    for (i, isPersonal) in entity.personal.enumerated() where isPersonal {
      let a = PropertyID(rawValue: UInt16(i))
      guard case .sealed(let sealed)? = try projector.value(o, a), sealed.subject != subject,
        !deferredPersonal.contains(where: { $0.object == o && $0.attribute == a })
      else { continue }
      // Opened and sealed under the subject now by the ordinary path; erased stays erased.
      guard let moved = try sealingPersonal(.set(o, attribute: a, value: .sealed(sealed))) else { continue }
      try emitSealed(moved)
    }
  }

  private func seal(
    _ value: Value, of o: ObjectID, _ a: PropertyID, _ entity: Entity, subject: ObjectID, _ ring: Keyring
  ) throws -> SealedValue {
    do {
      return try ring.seal(value, subject: subject, hashed: isHashed(a, of: entity), in: batch.handle)
    } catch let e as StoreError where e.code == .erasedSubject {
      throw StoreError.erasedSubject(object: objectName(o), subject: objectName(subject))
    }
  }

  /// The subject of `o`'s personal values: `o` itself, or the object its entity's subject
  /// path leads to (followed on from there while that object's entity has a path of its
  /// own); `nil` when a step of the path leads to no object.
  func subject(of o: ObjectID, _ entity: Entity) throws -> ObjectID? {
    var current = o
    var e = entity
    var hops = 0
    while !e.subjectPath.isEmpty {
      for step in e.subjectPath {
        guard let next = try related(current, step).first, let ne = try projector.liveEntity(next),
          let nextEntity = model.entity(ne)
        else { return nil }
        current = next
        e = nextEntity
      }
      hops += 1
      // The model refuses cycles of declared destinations; a sub-entity's own path could
      // still lead around: no subject then.
      if hops > model.entities.count { return nil }
    }
    return current
  }

  /// `state` with its sealed values opened, for this transaction's reads.
  func openPersonal(_ state: ObjectState) throws -> ObjectState {
    var opened = state
    if let ring = batch.dbs.keyring { opened = try ring.open(state, in: batch.handle) }
    for d in deferredPersonal where d.object == state.id { opened.set(d.attribute, d.value) }
    return opened
  }
}

// MARK: - Erasure

extension Transaction {
  /// Erases a subject's personal data.
  ///
  /// Records an erasure event (the subject and `reason`, none of the data) and destroys the subject's data key in the same commit,
  /// so that every value sealed under it — in the log, the projections, every model
  /// version, and every copy of them — is unreadable from then on. Needs no
  /// key-encryption key. A deleted subject can be erased too: its values are still in the
  /// log.
  ///
  /// - Returns: `false` when the subject was erased before (nothing is recorded).
  /// - Throws: ``ErrorCode/noSuchObject`` for an identity never given,
  ///   ``ErrorCode/notASubject`` for an object whose personal data belongs to
  ///   another (named when it can be found).
  @discardableResult
  public func erase(_ object: some ObjectReference, reason: String? = nil) throws -> Bool {
    try checkOpen()
    let subject = object.objectID
    guard let entityID = try entityID(of: subject), let entity = model.entity(entityID) else {
      // A subject this version has no identity for (deleted before an upcast that then did
      // not carry it) still has its key when an older version's log holds its values.
      if let ring = batch.dbs.keyring, let e = try ring.entry(subject, in: batch.handle) {
        guard !e.erased else { return false }
        return try recordErasure(subject, reason: reason, ring)
      }
      throw StoreError.noSuchObject(objectName(subject))
    }
    guard entity.subjectPath.isEmpty else {
      let owner = try projector.liveEntity(subject) != nil ? try self.subject(of: subject, entity) : nil
      let path = entity.subjectPath.compactMap { entity.property($0)?.name }.joined(separator: ".")
      throw StoreError.notASubject(
        object: objectName(subject), subject: owner.map(objectName),
        detail: "\(entity.name)'s personal data belongs to the object its '\(path)' leads to"
          + (owner.map { ": erase \(display($0))" } ?? ""))
    }
    guard model.isSubject(entity.id) else {
      throw StoreError.notASubject(
        object: objectName(subject), subject: nil,
        detail: "\(entity.name) has no personal attribute, and no entity names it as its subject")
    }
    guard let ring = batch.dbs.keyring else {
      throw StoreError.notASubject(
        object: objectName(subject), subject: nil, detail: "the store keeps no personal data")
    }
    // Values held back for want of a subject that this one is by now (a phone set, then
    // linked to the person erased here) are sealed under its key before it goes, so they
    // are erased with the rest of its data, as a value sealed at once would be.
    if try ring.entry(subject, in: batch.handle)?.erased != true { try sealDeferred(only: subject) }
    return try recordErasure(subject, reason: reason, ring)
  }

  /// Marks `subject` erased, its key to be destroyed once the commit holds, and records
  /// the erase event; `false` when it was erased before.
  private func recordErasure(_ subject: ObjectID, reason: String?, _ ring: Keyring) throws -> Bool {
    guard try ring.markErased(subject, in: batch.handle) else { return false }
    markWritten()
    batch.erased = true
    try emitSealed(.erase(subject, reason: reason))
    return true
  }

  /// Records the erasure of `subject` that another version's log holds (an upcast's
  /// destination): the event alone, since the subject's key, kept for the whole store, is
  /// destroyed already.
  package func carryErasure(_ subject: ObjectID, reason: String?) throws {
    try checkOpen()
    markWritten()
    try emitSealed(.erase(subject, reason: reason))
  }

  /// Whether `subject` was erased, as of this transaction.
  public func isErased(_ object: some ObjectReference) throws -> Bool {
    try checkOpen()
    return try batch.dbs.keyring?.entry(object.objectID, in: batch.handle)?.erased ?? false
  }
}

extension Model {
  /// Whether objects of `entity` are subjects of personal data: its own attributes are
  /// personal, or another entity's subject path ends at it (or at an ancestor of it).
  func isSubject(_ entity: EntityID) -> Bool {
    guard let e = self.entity(entity), e.subjectPath.isEmpty else { return false }
    if e.hasPersonalAttributes { return true }
    for other in entities where !other.subjectPath.isEmpty {
      var current = other
      for step in other.subjectPath {
        guard case .relationship(let r)? = current.property(step)?.kind, let next = self.entity(r.destination) else {
          break
        }
        current = next
      }
      if isKind(entity, of: current.id) || isKind(current.id, of: entity) { return true }
    }
    return false
  }
}
