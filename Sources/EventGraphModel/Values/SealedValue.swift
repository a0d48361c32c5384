/// A personal attribute's value as the store keeps it: encrypted under the data key of its
/// subject (Docs/privacy.md).
///
/// A store opened with its key-encryption key opens sealed values before they reach you:
/// you meet one only where the key is missing, wrong, or destroyed by an erasure of the
/// subject. It compares equal to another only when its bytes are the same; it is never
/// equal to a plain value, and predicates, sorts and rules do not look inside it.
public struct SealedValue: Sendable, Hashable {
  /// The stored fields, boxed: held inline they would make every ``Value`` (one of whose
  /// cases this is) larger, and so every object's values slower to copy, decode and compare.
  private final class Fields: Sendable {
    let type: AttributeType
    let subject: ObjectID
    let blindHash: [UInt8]
    let ciphertext: [UInt8]
    let state: SealedState?

    init(type: AttributeType, subject: ObjectID, blindHash: [UInt8], ciphertext: [UInt8], state: SealedState?) {
      self.type = type
      self.subject = subject
      self.blindHash = blindHash
      self.ciphertext = ciphertext
      self.state = state
    }
  }

  /// One reference and nothing else, so that the case of ``Value`` holding it is as cheap
  /// to copy as the case of an array.
  private var fields: Fields

  /// The attribute type of the value inside.
  public var type: AttributeType { fields.type }
  /// The object whose data key sealed it: erasing that object makes the value unreadable.
  public var subject: ObjectID { fields.subject }
  /// The keyed hash of the value inside, kept for an indexed or unique attribute so that
  /// the index needs no decryption (empty otherwise).
  public var blindHash: [UInt8] { fields.blindHash }
  /// The sealed bytes: nonce, ciphertext and authentication tag.
  public var ciphertext: [UInt8] { fields.ciphertext }
  /// Why the reader that gave it could not open it (`nil` before any reader tried).
  ///
  /// Not part of the stored value: equality and hashing leave it out.
  public var state: SealedState? {
    get { fields.state }
    set {
      fields = Fields(type: type, subject: subject, blindHash: blindHash, ciphertext: ciphertext, state: newValue)
    }
  }

  public init(
    type: AttributeType, subject: ObjectID, blindHash: [UInt8] = [], ciphertext: [UInt8], state: SealedState? = nil
  ) {
    fields = Fields(type: type, subject: subject, blindHash: blindHash, ciphertext: ciphertext, state: state)
  }

  public static func == (a: Self, b: Self) -> Bool {
    a.type == b.type && a.subject == b.subject && a.blindHash == b.blindHash && a.ciphertext == b.ciphertext
  }

  public func hash(into h: inout Hasher) {
    h.combine(type)
    h.combine(subject)
    h.combine(ciphertext)
  }
}

/// Why a personal value could not be opened, for what a reader shows in its place.
public enum SealedState: String, Sendable, Hashable {
  /// Its subject was erased: no key anywhere opens it.
  case erased
  /// The store was opened without its key-encryption key (or with another).
  case locked
}
