package org.example.isbn;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

class IsbnTest {
  @Test
  void parsesHyphenatedIsbn13() {
    Isbn isbn = Isbn.parse("978-0-306-40615-7");
    assertTrue(isbn.isIsbn13());
    assertEquals("9780306406157", isbn.digits());
  }

  @Test
  void convertsIsbn10ToIsbn13() {
    assertEquals("9780306406157", Isbn.parse("0-306-40615-2").toIsbn13().digits());
  }

  @Test
  void rejectsWrongCheckDigit() {
    assertThrows(IllegalArgumentException.class, () -> Isbn.parse("978-0-306-40615-8"));
  }

  @Test
  void rejectsWrongLength() {
    assertThrows(IllegalArgumentException.class, () -> Isbn.parse("12345"));
  }

  @Test
  void sameBookInBothFormsIsEqual() {
    assertEquals(Isbn.parse("0-306-40615-2"), Isbn.parse("978-0-306-40615-7"));
  }
}
