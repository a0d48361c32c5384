/// An object as the projector holds it during a commit: the stored record's entries left
/// encoded, with the values set since laid over them.
///
/// A commit usually sets one or two values of an object that has many. Decoding every value
/// (a `String` each) only to encode the same bytes again cost more than the rest of a
/// single-event commit; here a value is decoded when it is asked for, and the entries no
/// one changed are copied into the new record as they were stored. The record written is
/// the one ``ObjectState/encode(into:)`` writes for the same values.
///
/// A class, shared rather than copied: the projector reads its hot object once per event,
/// and a copy of the struct this was cost more than the read. Only the projector changes
/// it, and whoever it lends one to reads it at once.
final class ProjectedObject {
  let id: ObjectID
  let entity: EntityID
  /// The number of properties of the entity: the length of the decoded state's values.
  let propertyCount: Int
  /// The values, once decoded, and then authoritative: an inserted object's from the
  /// start (it has no stored entries), a loaded one's when its whole state is asked for.
  private var decoded: ObjectState?
  /// The stored record's entries, `(varint property, value)` each, in increasing property
  /// order and each with a value (a record that is not so is decoded when it is read).
  private(set) var stored: [UInt8]
  /// The values set since the record was read, in increasing property order; `nil`
  /// removes a value.
  private(set) var changes: [(property: PropertyID, value: Value?)] = []

  /// A record of a stored object, its entries still encoded.
  init(id: ObjectID, entity: EntityID, propertyCount: Int, stored: [UInt8]) {
    self.id = id
    self.entity = entity
    self.propertyCount = propertyCount
    self.stored = stored
  }

  /// A record holding decoded values: a new object's, or a stored one that had to be
  /// decoded as it was read.
  init(_ state: ObjectState) {
    self.id = state.id
    self.entity = state.entity
    self.propertyCount = state.values.count
    self.decoded = state
    self.stored = []
  }

  /// The value of an attribute, decoding only that one.
  func value(_ attribute: PropertyID) throws -> Value? {
    if let decoded { return decoded[attribute] }
    if let i = changeIndex(attribute) { return changes[i].value }
    return try storedValue(attribute)
  }

  /// Whether an attribute has a value, decoding none.
  func hasValue(_ attribute: PropertyID) throws -> Bool {
    if let decoded { return decoded[attribute] != nil }
    if let i = changeIndex(attribute) { return changes[i].value != nil }
    return try storedOffset(attribute) != nil
  }

  func set(_ attribute: PropertyID, _ value: Value?) {
    // Taken out and put back: changed while the record holds no other reference to them,
    // the values are changed in place.
    if var s = decoded.take() {
      s.set(attribute, value)
      decoded = s
      return
    }
    if let i = changeIndex(attribute) {
      changes[i].value = value
    } else {
      let i = changes.firstIndex { $0.property.rawValue > attribute.rawValue } ?? changes.endIndex
      changes.insert((attribute, value), at: i)
    }
  }

  /// The object's whole state; the record keeps it decoded from then on, so that a caller
  /// that reads it again and again (an upcast's mappings, a link's checks) decodes it once.
  func state() throws -> ObjectState {
    if let decoded { return decoded }
    var s = ObjectState(id: id, entity: entity, propertyCount: propertyCount)
    try decodeStored(into: &s)
    for (p, v) in changes { s.set(p, v) }
    decoded = s
    stored = []
    changes = []
    return s
  }

  /// Appends the `objects` record to `w`.
  func encode(into w: inout BinaryWriter) throws {
    if let decoded { return decoded.encode(into: &w) }
    try encodeStored(into: &w)
  }

  private func changeIndex(_ attribute: PropertyID) -> Int? {
    changes.firstIndex { $0.property == attribute }
  }
}
