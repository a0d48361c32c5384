/// What an erasure does to the projection (Docs/privacy.md, "Indexes after an erasure").
///
/// The erased subject's sealed values stay in the records as tombstones: their type and
/// subject, without ciphertext or blind hash (the key's destruction is the erasing
/// commit's, not the projection's, so a replay destroys nothing; it makes the same
/// tombstones). Without their blind hashes, the attribute and uniqueness indexes no longer
/// answer a guess of an erased value, and a unique value an erased subject held is free;
/// without their ciphertext, the projection holds nothing of them, and a truncation past the
/// erasure leaves nothing of them in the base either (Docs/retention.md). A sealed value
/// without a blind hash has no index entry and holds no uniqueness key.
extension Projector {
  func forgetBlindHashes(of subject: ObjectID) throws {
    for o in try objectsSealed(under: subject) {
      guard let entityID = try liveEntity(o), let e = model.entity(entityID), e.hasPersonalAttributes else {
        continue
      }
      let h = try makeHot(o)
      for (i, isPersonal) in e.personal.enumerated() where isPersonal {
        let a = PropertyID(rawValue: UInt16(i))
        guard case .sealed(let s)? = try h.value(a), s.subject == subject, !s.isTombstone else { continue }
        if e.indexed[i] && !s.blindHash.isEmpty {
          try txn.delete(dbs.index, key: IndexKey.key(entity: entityID, attribute: a, value: .sealed(s), object: o))
        }
        h.set(a, .sealed(SealedValue(type: s.type, subject: s.subject, ciphertext: [])))
      }
    }
  }

  private func objectsSealed(under subject: ObjectID) throws -> [ObjectID] {
    var found = [subject]
    for e in model.entities where !e.subjectPath.isEmpty && e.hasPersonalAttributes {
      // The relationships of the path, from the entity to the subject.
      var steps: [Relationship] = []
      var current = e
      for id in e.subjectPath {
        guard case .relationship(let r)? = current.property(id)?.kind, let next = model.entity(r.destination) else {
          break
        }
        steps.append(r)
        current = next
      }
      var objects = [subject]
      for r in steps.reversed() {
        objects = try objects.flatMap { try reader.referrers(of: $0, through: r) }
      }
      found += objects
    }
    return found
  }
}

extension SealedValue {
  /// Whether this is what an erasure leaves of a value: its type and subject, no ciphertext.
  var isTombstone: Bool { ciphertext.isEmpty }
}
