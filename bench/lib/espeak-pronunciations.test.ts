import { describe, expect, it } from 'vitest';
import { phonesFromIpa } from './espeak-pronunciations.js';

describe('phonesFromIpa', () => {
  // IPA as `espeak-ng -q --ipa -v en-us WORD` writes it (eSpeak NG 1.51).
  it.each([
    ['mˈɛtfoːɹmˌɪn\n', 'M EH T F AO R M IH N'],
    ['ˈeɪtɹɪəl', 'EY T R IH AH L'],
    ['kɹiːˈeɪtɪnˌaɪn', 'K R IY EY T IH N AY N'],
    ['nɛfɹˈɑːlədʒˌɪst', 'N EH F R AA L AH JH IH S T'],
    ['wˈɔːɹfɚɹˌɪn', 'W AO R F ER IH N'],
    ['tʃˈædz', 'CH AE D Z'],
    ['kˌɑːntɹəˈɪndᵻkˌeɪɾᵻd', 'K AA N T R AH IH N D IH K EY T IH D'],
    ['bˈʌʔn̩', 'B AH T AH N'],
    ['θˈɜːzdeɪ', 'TH ER Z D EY'],
  ])('%s -> %s', (ipa, phones) => {
    expect(phonesFromIpa(ipa)).toBe(phones);
  });

  it('gives nothing for a sound outside the table, several words or nothing', () => {
    expect(phonesFromIpa('mˈɛtʙ')).toBeUndefined();
    expect(phonesFromIpa('ðə kˈæt')).toBeUndefined();
    expect(phonesFromIpa('  \n')).toBeUndefined();
  });
});
