import { create } from 'zustand';
import type {
  CapabilityGroupId,
  QualificationJobStatus,
  QualificationReplayDto,
  QualificationReportDto,
} from '../../../src/api/contract';

// The Qualification board's state (low rate, React): the form, the campaign's WBC × clip matrix
// (qualification.report), the job running on it, the group filter and the pair replayed.
// Actions in qualificationActions.ts.

export type GroupFilter = 'all' | CapabilityGroupId;

export interface BoardForm {
  campaignDir: string;
  bindingsText: string;
  rolloutsText: string;
  limitText: string;
  clipsText: string;
}

export interface QualificationBoardState {
  form: BoardForm;
  report: QualificationReportDto | null;
  loading: boolean;
  error: string | null;
  job: QualificationJobStatus | null;
  starting: boolean;
  groupFilter: GroupFilter;
  selected: { bindingKey: string; clipId: string } | null;
  replay: Omit<QualificationReplayDto, 'reference' | 'executed'> | null;
  replaying: boolean;
}

export const useQualificationStore = create<QualificationBoardState>(() => ({
  form: {
    campaignDir: '',
    bindingsText: 'builtin, builtin:assist=3000',
    rolloutsText: '3', // mb-admission/1's rollouts per pair (docs/QUALIFICATION.md)
    limitText: '',
    clipsText: '',
  },
  report: null,
  loading: false,
  error: null,
  job: null,
  starting: false,
  groupFilter: 'all',
  selected: null,
  replay: null,
  replaying: false,
}));

export const patchBoardForm = (patch: Partial<BoardForm>): void =>
  useQualificationStore.setState((s) => ({ form: { ...s.form, ...patch } }));
export const setGroupFilter = (groupFilter: GroupFilter): void => useQualificationStore.setState({ groupFilter });
